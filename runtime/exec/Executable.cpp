//===- Executable.cpp - An artifact with its kernels placed ---------------===//

#include "runtime/exec/Executable.h"

#include "runtime/cpu/CpuFeatures.h"
#include "runtime/support/PrintableText.h"

namespace kiln::exec {

using namespace artifact;

namespace {

std::string stringOr(const flatbuffers::String *text, const char *absent) {
  return text ? text->str() : absent;
}

/// Checks that this runtime and this CPU can run `kernels`; sets `problem`
/// to "FIELD: PROBLEM" otherwise.
bool checkKernelTarget(const artifact::KernelLibrary &kernels,
                       std::string &problem) {
  std::string format = stringOr(kernels.format(), "");
  if (format != kKernelFormat) {
    problem = "kernels.format: '" + format + "': this runtime loads '" +
              kKernelFormat + "'";
    return false;
  }
  std::vector<std::string> missing =
      cpu::missingCpuFeatures(stringOr(kernels.features(), ""));
  if (!missing.empty()) {
    problem = "kernels.features: this CPU lacks";
    for (size_t i = 0; i < missing.size(); ++i)
      problem += (i ? ", " : " ") + missing[i];
    problem += " (the kernels were compiled for " +
               stringOr(kernels.cpu(), "an unnamed CPU") + ")";
    return false;
  }
  return true;
}

/// "FIELD: PROBLEM" for the first KernelCall with rows whose kernel has no
/// row entry in `rowKernels`, else "". (The verifier has checked indices.)
std::string missingRowKernel(const Artifact &root,
                             const std::vector<cpu::KernelFunction> &rowKernels) {
  if (!root.programs())
    return "";
  for (flatbuffers::uoffset_t p = 0; p < root.programs()->size(); ++p) {
    const Program *program = root.programs()->Get(p);
    const auto *types = program->instructions_type();
    if (!types)
      continue;
    for (flatbuffers::uoffset_t i = 0; i < types->size(); ++i) {
      bool blocked = types->Get(i) == Instruction_BlockedGemm;
      if (types->Get(i) != Instruction_KernelCall && !blocked)
        continue;
      const KernelCall *call = blocked
                                   ? program->instructions()->GetAs<BlockedGemm>(i)->update()
                                   : program->instructions()->GetAs<KernelCall>(i);
      if (call->rows() > 0 && !rowKernels[call->kernel()])
        return "programs[" + std::to_string(p) + "] ('" + stringOr(program->name(), "") +
               "').instructions[" + std::to_string(i) +
               (blocked ? "] (BlockedGemm).update.rows" : "] (KernelCall).rows") +
               ": kernels.object has no row entry for kernel " +
               std::to_string(call->kernel()) + " (" + std::to_string(call->rows()) +
               " rows)";
    }
  }
  return "";
}

} // namespace

std::shared_ptr<const Executable>
Executable::load(const std::string &path, std::string &error,
                 cpu::KernelPlacement placement) {
  std::unique_ptr<VerifiedArtifact> artifact =
      VerifiedArtifact::load(path, error);
  if (!artifact)
    return nullptr;
  return fromArtifact(std::move(artifact), error, placement);
}

std::shared_ptr<const Executable>
Executable::fromArtifact(std::unique_ptr<VerifiedArtifact> artifact,
                         std::string &error, cpu::KernelPlacement placement) {
  auto failure = [&](const std::string &problem) {
    error = printableText(artifact->path() + ": error: " + problem);
    return nullptr;
  };
  const Artifact &root = artifact->root();
  std::string target = stringOr(root.target(), "");
  if (target != kTarget)
    return failure("target: '" + target + "': this runtime runs '" + kTarget +
                   "' artifacts");

  std::shared_ptr<Executable> executable(new Executable());
  const artifact::KernelLibrary *kernels = root.kernels();
  if (kernels && kernels->symbols() && kernels->symbols()->size() > 0) {
    std::string problem;
    if (!checkKernelTarget(*kernels, problem))
      return failure(problem);
    std::vector<std::string> symbols;
    for (const flatbuffers::String *symbol : *kernels->symbols())
      symbols.push_back(symbol->str());
    executable->kernels_ = cpu::KernelLibrary::load(
        kernels->object()->data(), kernels->object()->size(), symbols,
        placement, problem);
    if (!executable->kernels_)
      return failure(problem);
    for (const std::string &symbol : symbols)
      executable->rowKernels_.push_back(executable->kernels_->lookup(symbol + "_rows"));
  }
  if (std::string problem = missingRowKernel(root, executable->rowKernels_); !problem.empty())
    return failure(problem);
  executable->artifact_ = std::move(artifact);
  return executable;
}

} // namespace kiln::exec
