//===- TrainingModel.cpp - What training needs of an artifact -------------===//

#include "runtime/train/TrainingModel.h"

#include "runtime/artifact/DTypes.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>

namespace kiln::train {

using namespace artifact;

namespace {

const Program *findProgram(const Artifact &root, const char *name) {
  if (root.programs())
    for (const Program *program : *root.programs())
      if (program->name() && program->name()->str() == name)
        return program;
  return nullptr;
}

std::string text(const flatbuffers::String *value) { return value ? value->str() : ""; }

bool toCheckpointType(DType dtype, checkpoint::DType &out) {
  switch (dtype) {
  case DType_F32: out = checkpoint::DType::F32; return true;
  case DType_F16: out = checkpoint::DType::F16; return true;
  case DType_BF16: out = checkpoint::DType::BF16; return true;
  case DType_I32: out = checkpoint::DType::I32; return true;
  case DType_I64: out = checkpoint::DType::I64; return true;
  case DType_I1: out = checkpoint::DType::Bool; return true;
  default: return false;
  }
}

/// "session call failed" errors carry their own text.
bool check(const std::optional<exec::SessionError> &failure) { return !failure; }

} // namespace

bool TrainingModel::describe(std::shared_ptr<const exec::Executable> executable,
                             const std::string &path, std::string &error) {
  executable_ = std::move(executable);
  path_ = path;
  const VerifiedArtifact &artifact = executable_->artifact();
  const Artifact &root = artifact.root();
  const Training *training = root.training();
  const Program *train = findProgram(root, kTrainProgram);
  if (!training || !train || !findProgram(root, kForwardProgram)) {
    error = path + ": error: not a training artifact (it has no train_step program; compile "
                   "a model with a train spec, or ONNX with kilnc --train)";
    return false;
  }
  accumulateSteps_ = training->accumulate_steps();
  dataParallel_ = training->strategy() && training->strategy()->string_view() == "all_reduce";
  if (train->fetches())
    for (const Binding *binding : *train->fetches())
      lossScaling_ = lossScaling_ || text(binding->name()) == "skipped_step";
  if (accumulateSteps_ < 1) {
    error = path + ": error: training.accumulate_steps is " + std::to_string(accumulateSteps_) +
            ", expected >= 1";
    return false;
  }
  const Program *batchProgram = train;
  if (accumulateSteps_ > 1) {
    batchProgram = findProgram(root, kAccumulateProgram);
    if (!batchProgram) {
      error = path + ": error: training.accumulate_steps is " +
              std::to_string(accumulateSteps_) + " but there is no " + kAccumulateProgram +
              " program";
      return false;
    }
  }
  name_ = text(root.model());
  loss_ = text(training->loss());
  label_ = text(training->label());
  lossKind_ = text(training->loss_kind());
  prediction_ = text(training->prediction());
  stepVariable_ = text(training->step_variable());
  if (batchProgram->feeds())
    for (const Binding *feed : *batchProgram->feeds()) {
      const Buffer &buffer = *root.buffers()->Get(feed->buffer());
      data::FeedSpec spec;
      spec.name = text(feed->name());
      switch (buffer.dtype()) {
      case DType_F32: spec.type = data::ElementType::F32; break;
      case DType_I32: spec.type = data::ElementType::I32; break;
      case DType_I64: spec.type = data::ElementType::I64; break;
      default:
        error = path + ": error: feed '" + spec.name + "' is " + dtypeName(buffer.dtype()) +
                "; training data can fill f32, i32 and i64 feeds";
        return false;
      }
      if (!buffer.shape() || buffer.shape()->size() < 1) {
        error = path + ": error: feed '" + spec.name +
                "' is a scalar; training feeds have a batch dimension";
        return false;
      }
      int64_t batch = buffer.shape()->Get(0);
      bool integers = spec.type != data::ElementType::F32;
      if (integers && feed->offsets_stride() > 0) {
        // An EmbeddingBag's offsets: made below, once the batch is known.
        madeFeeds_.push_back({spec.name, buffer.dtype(), {}});
        continue;
      }
      int64_t perExample = feed->ids_per_example();
      if (perExample > 0) {
        // An EmbeddingBag's ids (or per-sample weights): the batch's lists
        // back to back.
        if (buffer.shape()->size() != 1 || batch % perExample != 0) {
          error = path + ": error: feed '" + spec.name + "' takes " +
                  std::to_string(perExample) + " ids per example, but its shape is not [" +
                  "examples x " + std::to_string(perExample) + "]";
          return false;
        }
        batch /= perExample;
      }
      if (batchSize_ != 0 && batch != batchSize_) {
        error = path + ": error: feed '" + spec.name + "' has batch " + std::to_string(batch) +
                ", another feed has " + std::to_string(batchSize_);
        return false;
      }
      batchSize_ = batch;
      if (perExample > 0)
        spec.exampleShape = {perExample};
      else
        spec.exampleShape.assign(buffer.shape()->begin() + 1, buffer.shape()->end());
      spec.idBound = feed->id_bound();
      spec.paddedIds = feed->padded_ids() || (integers && perExample > 0);
      if (feed->ignores_id())
        spec.ignoredId = feed->ignored_id();
      specs_.push_back(spec);
      feedTypes_.push_back(buffer.dtype());
    }
  // Offsets: example i's list starts at i x the ids per example; one more
  // offset (include_last_offset) is where the last list ends.
  for (MadeFeed &made : madeFeeds_) {
    const Binding *feed = nullptr;
    for (const Binding *candidate : *batchProgram->feeds())
      if (text(candidate->name()) == made.name)
        feed = candidate;
    const Buffer &buffer = *root.buffers()->Get(feed->buffer());
    int64_t count = buffer.shape()->Get(0);
    if (buffer.shape()->size() != 1 || (count != batchSize_ && count != batchSize_ + 1)) {
      error = path + ": error: feed '" + made.name + "' holds " + std::to_string(count) +
              " offsets, but a batch has " + std::to_string(batchSize_) + " examples (" +
              std::to_string(batchSize_) + " or " + std::to_string(batchSize_ + 1) +
              " offsets expected)";
      return false;
    }
    bool wide = made.dtype == DType_I64;
    made.bytes.resize(count * (wide ? 8 : 4));
    for (int64_t i = 0; i < count; ++i) {
      int64_t offset = i * feed->offsets_stride();
      if (wide)
        std::memcpy(made.bytes.data() + 8 * i, &offset, 8);
      else {
        auto narrow = static_cast<int32_t>(offset);
        std::memcpy(made.bytes.data() + 4 * i, &narrow, 4);
      }
    }
  }
  if (root.variables())
    for (const Variable *variable : *root.variables()) {
      // The parameter servers hold (and checkpoint) a placed variable.
      if (variable->placement())
        continue;
      const Buffer &buffer = *root.buffers()->Get(variable->buffer());
      VariableInfo info{text(variable->name()), buffer.dtype(), {},
                        static_cast<size_t>(artifact.buffer(variable->buffer()).byteSize)};
      if (buffer.shape())
        info.shape.assign(buffer.shape()->begin(), buffer.shape()->end());
      variables_.push_back(info);
    }
  return true;
}

namespace {

/// This machine's memory in bytes; 0 if unknown.
uint64_t physicalMemoryBytes() {
  long pages = ::sysconf(_SC_PHYS_PAGES), pageSize = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && pageSize > 0 ? uint64_t(pages) * uint64_t(pageSize) : 0;
}

/// "1.5 GB".
std::string gigabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GB", bytes / 1e9);
  return text;
}

} // namespace

bool TrainingModel::loadData(const std::string &path, const data::ReadOptions &options,
                             std::shared_ptr<const data::Dataset> &out,
                             std::string &error) const {
  try {
    return loadDataOrThrow(path, options, out, error);
  } catch (const std::bad_alloc &) {
    error = path + ": error: out of memory holding the data set (every example is kept in "
                   "memory: use a smaller file, or fewer rows)";
    return false;
  }
}

bool TrainingModel::loadDataOrThrow(const std::string &path, const data::ReadOptions &options,
                                    std::shared_ptr<const data::Dataset> &out,
                                    std::string &error) const {
  auto dataset = std::make_shared<data::Dataset>();
  const std::string synthetic = "synthetic";
  if (path.compare(0, synthetic.size(), synthetic) == 0) {
    int64_t rows = 64 * batchSize_;
    if (path.size() > synthetic.size()) {
      std::string count = path.substr(synthetic.size() + 1);
      bool digits = !count.empty() && count.size() <= 18 &&
                    count.find_first_not_of("0123456789") == std::string::npos;
      rows = digits ? std::stoll(count) : 0; // "1e3" and "64abc" are not counts.
      if (path[synthetic.size()] != ':' || rows < 1) {
        error = "kiln: error: --data '" + path + "': expected synthetic or synthetic:ROWS";
        return false;
      }
    }
    // Made up in memory: refuse what this machine cannot hold before trying.
    uint64_t rowBytes = 0;
    for (const data::FeedSpec &spec : specs_)
      rowBytes += data::exampleBytes(spec);
    uint64_t memory = physicalMemoryBytes();
    if (memory && rowBytes && static_cast<uint64_t>(rows) > memory / rowBytes) {
      error = "kiln: error: --data '" + path + "': " + std::to_string(rows) + " rows of " +
              std::to_string(rowBytes) + " bytes (" +
              gigabytes(double(rows) * double(rowBytes)) + ") exceed this machine's " +
              gigabytes(double(memory)) + " of memory";
      return false;
    }
    *dataset = data::syntheticDataset(specs_, label_, rows, /*seed=*/1);
  } else if (!data::loadDataset(path, specs_, label_, options, *dataset, error)) {
    return false;
  }
  if (dataset->rows < 1) {
    error = path + ": error: no usable rows";
    return false;
  }
  out = std::move(dataset);
  return true;
}

bool TrainingModel::run(exec::Session &session, const char *program,
                        std::string &error) const {
  return check(session.run(program, error));
}

bool TrainingModel::runInit(exec::Session &session, std::string &error) const {
  return run(session, "init", error);
}
bool TrainingModel::runTrainStep(exec::Session &session, std::string &error) const {
  return run(session, kTrainProgram, error);
}
bool TrainingModel::runAccumulateStep(exec::Session &session, std::string &error) const {
  return run(session, kAccumulateProgram, error);
}
bool TrainingModel::runForward(exec::Session &session, std::string &error) const {
  return run(session, kForwardProgram, error);
}

bool TrainingModel::bindMadeFeeds(exec::Session &session, const char *program,
                                  std::string &error) const {
  for (const MadeFeed &made : madeFeeds_)
    if (!check(session.bindFeed(program, made.name, made.dtype, made.bytes.data(),
                                made.bytes.size(), error)))
      return false;
  return true;
}

bool TrainingModel::bindBatch(exec::Session &session, const char *program,
                              const std::vector<std::vector<uint8_t>> &batch,
                              std::string &error) const {
  if (!bindMadeFeeds(session, program, error))
    return false;
  for (size_t i = 0; i < specs_.size(); ++i)
    if (!check(session.bindFeed(program, specs_[i].name, feedTypes_[i], batch[i].data(),
                                batch[i].size(), error)))
      return false;
  return true;
}

bool TrainingModel::bindBatch(exec::Session &session, const char *program,
                              data::BatchReader &reader, std::string &error,
                              FeedCounts *counts) const {
  FeedCounts none;
  FeedCounts &count = counts ? *counts : none;
  if (!bindMadeFeeds(session, program, error))
    return false;
  // The data set checked every row's ids against the batch program's
  // bounds (specs_) when it was loaded: no second pass for that program.
  bool idsChecked = std::string_view(program) == batchProgram();
  std::vector<const uint8_t *> pieces;
  auto borrowAll = [&]() {
    for (size_t i = 0; i < specs_.size(); ++i) {
      bool borrowed = false;
      if (!check(session.borrowFeed(program, specs_[i].name, feedTypes_[i], pieces[i],
                                    reader.feedBytes(i), borrowed, error, idsChecked)))
        return false;
      ++(borrowed ? count.inPlace : count.copied);
    }
    return true;
  };
  if (reader.prefetch() > 0) {
    // The reader's slot stays as it is until the following next(): the
    // step reads the batch there.
    const std::vector<std::vector<uint8_t>> &batch = reader.next();
    for (const std::vector<uint8_t> &feed : batch)
      pieces.push_back(feed.data());
    return borrowAll();
  }
  if (reader.nextInPlace(pieces))
    return borrowAll();
  count.copied += static_cast<int64_t>(specs_.size());
  std::vector<uint8_t *> destinations(specs_.size());
  for (size_t i = 0; i < specs_.size(); ++i) {
    void *address = nullptr;
    if (!check(session.feedAddress(program, specs_[i].name, feedTypes_[i], reader.feedBytes(i),
                                   address, error)))
      return false;
    destinations[i] = static_cast<uint8_t *>(address);
  }
  reader.nextInto(destinations);
  for (size_t i = 0; i < specs_.size(); ++i)
    if (!check(session.bindWrittenFeed(program, specs_[i].name, feedTypes_[i],
                                       reader.feedBytes(i), error, idsChecked)))
      return false;
  return true;
}

bool TrainingModel::prefetchBatch(exec::Session &session, const char *program,
                                  const std::vector<std::vector<uint8_t>> &batch,
                                  std::string &error) const {
  std::vector<std::pair<std::string_view, const void *>> feeds;
  for (size_t i = 0; i < specs_.size(); ++i)
    feeds.emplace_back(specs_[i].name, batch[i].data());
  return session.prefetchPulls(program, feeds, error);
}

bool TrainingModel::readScalar(const exec::Session &session, const char *program,
                               const std::string &fetch, double &value,
                               std::string &error) const {
  float scalar = 0;
  if (!check(session.readFetch(program, fetch, DType_F32, &scalar, sizeof(scalar), error)))
    return false;
  value = scalar;
  return true;
}

bool TrainingModel::readFloats(const exec::Session &session, const char *program,
                               const std::string &fetch, std::vector<float> &values,
                               std::string &error) const {
  const Artifact &root = executable_->artifact().root();
  const Program *found = findProgram(root, program);
  if (found && found->fetches())
    for (const Binding *binding : *found->fetches())
      if (text(binding->name()) == fetch) {
        values.resize(executable_->artifact().buffer(binding->buffer()).elementCount);
        return check(session.readFetch(program, fetch, DType_F32, values.data(),
                                       values.size() * sizeof(float), error));
      }
  error = path_ + ": error: program " + program + " has no fetch '" + fetch + "'";
  return false;
}

std::vector<checkpoint::TensorSpec> TrainingModel::checkpointSpecs() const {
  std::vector<checkpoint::TensorSpec> specs;
  for (const VariableInfo &variable : variables_) {
    checkpoint::TensorSpec spec;
    spec.name = variable.name;
    toCheckpointType(variable.dtype, spec.dtype);
    spec.shape = variable.shape;
    specs.push_back(spec);
  }
  return specs;
}

bool TrainingModel::restoreVariables(exec::Session &session,
                                     const checkpoint::Checkpoint &loaded, std::string &note,
                                     std::string &error) const {
  // kiln-autodiff's and kiln-expand-optimizer's names (passes/Graph/LossScaling.h):
  // an fp16 artifact may find neither in the checkpoint, another may find
  // both. (A model of another precision with its own variable named so is
  // checked as any.)
  const std::vector<std::string> state = {"loss_scale", "loss_scale/good_steps"};
  checkpoint::OptionalTensors optional;
  (lossScaling() ? optional.mayLack : optional.mayHaveExtra) = state;
  if (!checkpoint::checkMatches(loaded, checkpointSpecs(), name(), error, &optional))
    return false;
  if (!optional.missing.empty() && optional.missing.size() != state.size()) {
    error = loaded.path + ": error: checkpoint lacks tensor '" + optional.missing.front() +
            "' (F32 []) but has the rest of fp16 loss scaling's state";
    return false;
  }
  for (const checkpoint::LoadedTensor &tensor : loaded.tensors) {
    // The optimizer's step counter counts the updates made: one a step at
    // most (fp16 loss scaling may skip some).
    if (tensor.name == stepVariable_ && tensor.data.size() == sizeof(int64_t)) {
      int64_t updates = 0;
      std::memcpy(&updates, tensor.data.data(), sizeof updates);
      if (updates < 0 || updates > loaded.step) {
        error = loaded.path + ": error: tensor '" + tensor.name + "' counts " +
                std::to_string(updates) + " optimizer updates, but the manifest's step is " +
                std::to_string(loaded.step) + " (one of them was changed)";
        return false;
      }
    }
    bool ignored = std::find(optional.ignored.begin(), optional.ignored.end(), tensor.name) !=
                   optional.ignored.end();
    if (!ignored && !writeVariable(session, tensor.name, tensor.data, error))
      return false;
  }
  note.clear();
  if (!optional.missing.empty())
    note = " (it has no fp16 loss scale: the scale starts afresh)";
  else if (!optional.ignored.empty())
    note = " (its fp16 loss scale is not used: this artifact does not scale the loss)";
  return true;
}

bool TrainingModel::lossScaleNow(const exec::Session &session, float &scale,
                                 std::string &error) const {
  return check(session.readVariable("loss_scale", DType_F32, &scale, sizeof scale, error));
}

bool TrainingModel::followSkippedStep(exec::Session &session, float used, double &scale,
                                     std::string &error) const {
  float halved = used / 2, zero = 0;
  if (!check(session.writeVariable("loss_scale", DType_F32, &halved, sizeof halved, error)) ||
      !check(session.writeVariable("loss_scale/good_steps", DType_F32, &zero, sizeof zero,
                                   error)))
    return false;
  scale = halved;
  return true;
}

bool TrainingModel::writeVariable(exec::Session &session, const std::string &name,
                                  const std::vector<uint8_t> &bytes, std::string &error) const {
  for (const VariableInfo &variable : variables_)
    if (variable.name == name)
      return check(session.writeVariable(name, variable.dtype, bytes.data(), bytes.size(),
                                         error));
  error = path_ + ": error: the model has no variable '" + name + "'";
  return false;
}

bool TrainingModel::checkpointRequest(const exec::Session &session, int64_t step,
                                      std::vector<std::vector<uint8_t>> &storage,
                                      checkpoint::SaveRequest &request,
                                      std::string &error) const {
  request.model = name_;
  request.step = step;
  request.data["batches_consumed"] = step * accumulateSteps_;
  storage.assign(variables_.size(), {});
  for (size_t i = 0; i < variables_.size(); ++i) {
    const VariableInfo &variable = variables_[i];
    storage[i].resize(variable.bytes);
    if (!check(session.readVariable(variable.name, variable.dtype, storage[i].data(),
                                    storage[i].size(), error)))
      return false;
    checkpoint::TensorRef ref;
    ref.name = variable.name;
    toCheckpointType(variable.dtype, ref.dtype);
    ref.shape = variable.shape;
    ref.data = storage[i].data();
    ref.bytes = storage[i].size();
    request.tensors.push_back(ref);
  }
  return true;
}

} // namespace kiln::train
