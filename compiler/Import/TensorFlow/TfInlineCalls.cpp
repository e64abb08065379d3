//===- TfInlineCalls.cpp - Function calls of a GraphDef inlined -----------===//
//
// A function's nodes name their inputs differently from a graph's: an
// argument by its name, a node's output as "node:arg:k" (output argument
// `arg` of the node's op, element k of it), a control input as "^node".
// Each becomes the graph's form: the call's input, "<call>/node:i" with i
// the output's index among all of the op's outputs, "^<call>/node". Most
// ops have one output argument, so i = k; the few kiln meets with several
// are numbered from a table, and an op outside it read through two output
// argument names is refused rather than guessed.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/TensorFlow/TfInlineCalls.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/TensorFlow/TfOps.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <functional>
#include <optional>

using namespace mlir;

namespace kiln {
namespace {

/// Calls nested deeper than this are refused.
constexpr int kMaxCallDepth = 16;
/// Inlining that adds more nodes than this is refused (a function calling
/// another many times, nested: the count multiplies).
constexpr int kMaxInlinedNodes = 1 << 20;

/// The index of output argument `arg`'s first output among all outputs of
/// `op`, for the ops with several output arguments; nullopt for any other
/// op (one output argument: the index is k).
std::optional<unsigned> outputArgOffset(StringRef op, StringRef arg, bool &known) {
  static const llvm::StringMap<SmallVector<StringRef>> kOutputArgs = {
      {"FusedBatchNorm",
       {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"}},
      {"FusedBatchNormV2",
       {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"}},
      {"FusedBatchNormV3",
       {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2",
        "reserve_space_3"}},
      {"Unique", {"y", "idx"}},
      {"UniqueWithCounts", {"y", "idx", "count"}},
      {"TopKV2", {"values", "indices"}},
      {"Switch", {"output_false", "output_true"}},
      {"Merge", {"output", "value_index"}},
  };
  auto it = kOutputArgs.find(op);
  known = it != kOutputArgs.end();
  if (!known)
    return std::nullopt;
  const SmallVector<StringRef> &args = it->second;
  auto found = llvm::find(args, arg);
  if (found == args.end())
    return std::nullopt;
  return static_cast<unsigned>(found - args.begin());
}

/// Whether kiln knows `op` to have one output argument (a single tensor or
/// one list): the ops it converts (but those of the table above) and those
/// the importer reads itself.
bool hasOneOutputArg(StringRef op) {
  return lookupTfOp(op) || op.starts_with("TensorList") || op == "Const" ||
         op == "Placeholder" || op == "Enter" || op == "Exit" || op == "NextIteration" ||
         op == "LoopCond" || op == "PartitionedCall" || op == "StatefulPartitionedCall";
}

/// The function a node calls: the empty string for none, nullopt for a
/// call that does not name one.
std::optional<std::string> calleeOf(const tensorflow::NodeDef &node,
                     const llvm::StringMap<const tensorflow::FunctionDef *> &library) {
  if (node.op() == "PartitionedCall" || node.op() == "StatefulPartitionedCall") {
    auto f = node.attr().find("f");
    if (f == node.attr().end() || f->second.value_case() != tensorflow::AttrValue::kFunc)
      return std::nullopt;
    return f->second.func().name();
  }
  return library.count(node.op()) ? node.op() : "";
}

class CallInliner {
public:
  CallInliner(TfGraphFile &file, llvm::function_ref<Location(int)> nodeLoc)
      : file(file), graph(file.graph), nodeLoc(nodeLoc) {}

  LogicalResult run();

private:
  LogicalResult inlineCall(int call, const tensorflow::FunctionDef &function);
  /// The graph's form of a body input; failure after one error.
  FailureOr<std::string> translate(StringRef input, bool &drop);

  TfGraphFile &file;
  tensorflow::GraphDef &graph;
  llvm::function_ref<Location(int)> nodeLoc;
  llvm::StringMap<const tensorflow::FunctionDef *> library;
  std::vector<int> depth;
  /// Every node's name, the inlined ones' included.
  llvm::StringSet<> names;
  int originalCount = 0;
  /// The nodes the file's calls add, inlined whole.
  int64_t added = 0;
  llvm::StringMap<int64_t> sizes;

  /// The nodes inlining a call of `function` adds, nested calls inlined
  /// (at most kMaxInlinedNodes + 1; the function's calls end: cycleFrom).
  int64_t inlinedSize(StringRef function);
  /// Per function: "" when its calls end, else the cycle of calls it reaches.
  llvm::StringMap<std::string> cycles;

  /// The cycle of calls `function` reaches ("f -> g -> f"), or "".
  std::string cycleFrom(StringRef function);

  // The call being inlined.
  int call = -1;
  std::string prefix;
  llvm::StringMap<std::string> arguments;
  llvm::StringMap<std::string> bodyOps;
  /// The output argument name each body node of a one-argument op was read
  /// through.
  llvm::StringMap<std::string> argumentRead;
};

LogicalResult CallInliner::run() {
  for (const tensorflow::FunctionDef &function : graph.library().function())
    library.try_emplace(function.signature().name(), &function);
  originalCount = graph.node_size();
  depth.assign(graph.node_size(), 0);
  for (const tensorflow::NodeDef &node : graph.node())
    names.insert(node.name());
  // Nodes appended by an inlined call are visited in turn.
  for (int i = 0; i < graph.node_size(); ++i) {
    std::optional<std::string> callee = calleeOf(graph.node(i), library);
    if (!callee)
      return emitError(nodeLoc(i)) << "expects attribute 'f' (the function it calls)";
    if (callee->empty())
      continue;
    auto found = library.find(*callee);
    if (found == library.end())
      return emitError(nodeLoc(i)) << "calls function '" << printable(*callee)
                                   << "', which the graph's library does not hold";
    if (std::string cycle = cycleFrom(*callee); !cycle.empty())
      return emitError(nodeLoc(i)) << "calls function '" << printable(*callee)
                                   << "', whose calls go round a cycle (" << printable(cycle)
                                   << ")";
    if (depth[i] >= kMaxCallDepth)
      return emitError(nodeLoc(i)) << "calls functions nested more than " << kMaxCallDepth
                                   << " deep";
    if (i < originalCount) {
      added += inlinedSize(*callee);
      if (added > kMaxInlinedNodes)
        return emitError(nodeLoc(i)) << "calls function '" << printable(*callee)
                                     << "': inlining the graph's calls would add more than "
                                     << kMaxInlinedNodes << " nodes";
    }
    if (failed(inlineCall(i, *found->second)))
      return failure();
  }
  return success();
}

std::string CallInliner::cycleFrom(StringRef function) {
  auto cached = cycles.find(function);
  if (cached != cycles.end())
    return cached->second;
  // Depth-first over the functions each calls, the path on a stack.
  SmallVector<std::string> path;
  std::string found;
  llvm::StringSet<> done;
  std::function<void(StringRef)> visit = [&](StringRef name) {
    if (!found.empty() || done.contains(name))
      return;
    if (llvm::is_contained(path, name)) {
      auto start = llvm::find(path, name);
      for (auto it = start; it != path.end(); ++it)
        found += *it + " -> ";
      found += name.str();
      return;
    }
    auto f = library.find(name);
    if (f == library.end())
      return;
    path.push_back(name.str());
    for (const tensorflow::NodeDef &node : f->second->node_def())
      if (std::optional<std::string> callee = calleeOf(node, library);
          callee && !callee->empty())
        visit(*callee);
    path.pop_back();
    done.insert(name);
  };
  visit(function);
  cycles[function] = found;
  return found;
}

int64_t CallInliner::inlinedSize(StringRef function) {
  if (auto cached = sizes.find(function); cached != sizes.end())
    return cached->second;
  int64_t size = 0;
  if (auto f = library.find(function); f != library.end()) {
    for (const tensorflow::NodeDef &node : f->second->node_def()) {
      size += 1;
      if (std::optional<std::string> callee = calleeOf(node, library);
          callee && !callee->empty() && cycleFrom(*callee).empty())
        size += inlinedSize(*callee);
      size = std::min<int64_t>(size, kMaxInlinedNodes + 1);
    }
  }
  sizes[function] = size;
  return size;
}

FailureOr<std::string> CallInliner::translate(StringRef input, bool &drop) {
  drop = false;
  const std::string &callName = graph.node(call).name();
  if (input.consume_front("^")) {
    // Control edges mean nothing to kiln; one on an argument is dropped.
    drop = arguments.count(input) != 0;
    return "^" + prefix + input.str();
  }
  SmallVector<StringRef, 3> parts;
  input.split(parts, ':');
  if (parts.size() == 1) {
    auto argument = arguments.find(input);
    if (argument == arguments.end())
      return emitError(nodeLoc(call))
             << "calls a function whose nodes read '" << printable(input)
             << "', which is none of its arguments (" << printable(callName) << ")";
    return argument->second;
  }
  unsigned k = 0;
  auto op = bodyOps.find(parts[0]);
  if (parts.size() != 3 || parts[1].empty() || parts[2].getAsInteger(10, k) ||
      op == bodyOps.end())
    return emitError(nodeLoc(call))
           << "calls a function whose nodes read '" << printable(input)
           << "', which is not 'argument', 'node:output:k' or '^node' of its nodes";
  bool known = false;
  std::optional<unsigned> offset = outputArgOffset(op->second, parts[1], known);
  // A node calling a function by name has the function's results.
  if (auto function = library.find(op->second); !known && function != library.end()) {
    known = true;
    const auto &results = function->second->signature().output_arg();
    auto result = llvm::find_if(results, [&](const tensorflow::OpDef::ArgDef &arg) {
      return arg.name() == parts[1];
    });
    if (result != results.end())
      offset = static_cast<unsigned>(result - results.begin());
  }
  if (known && !offset)
    return emitError(nodeLoc(call))
           << "calls a function whose nodes read '" << printable(input) << "': "
           << printable(op->second) << " has no output '" << printable(parts[1]) << "'";
  if (!known && !hasOneOutputArg(op->second))
    return emitError(nodeLoc(call))
           << "calls a function whose nodes read output '" << printable(parts[1])
           << "' of node '" << printable(parts[0]) << "' (" << printable(op->second)
           << "), an op kiln does not convert, whose outputs it cannot number";
  if (!known) {
    auto [read, inserted] = argumentRead.try_emplace(parts[0], parts[1].str());
    if (!inserted && read->second != parts[1])
      return emitError(nodeLoc(call))
             << "calls a function whose nodes read outputs '" << printable(read->second)
             << "' and '" << printable(parts[1]) << "' of node '" << printable(parts[0])
             << "' (" << printable(op->second)
             << "), an op whose outputs kiln cannot number";
  }
  return prefix + parts[0].str() + ":" + std::to_string(offset.value_or(0) + k);
}

LogicalResult CallInliner::inlineCall(int index, const tensorflow::FunctionDef &function) {
  call = index;
  tensorflow::NodeDef &node = *graph.mutable_node(index);
  prefix = node.name() + "/";
  const tensorflow::OpDef &signature = function.signature();
  SmallVector<std::string> data;
  for (const std::string &input : node.input())
    if (!StringRef(input).starts_with("^"))
      data.push_back(input);
  if (static_cast<int>(data.size()) != signature.input_arg_size())
    return emitError(nodeLoc(index))
           << "calls function '" << printable(signature.name()) << "' with " << data.size()
           << " inputs; it takes " << signature.input_arg_size();
  auto polymorphic = [](const tensorflow::OpDef::ArgDef &arg) {
    return !arg.type_attr().empty() || !arg.number_attr().empty() ||
           !arg.type_list_attr().empty();
  };
  if (llvm::any_of(signature.input_arg(), polymorphic) ||
      llvm::any_of(signature.output_arg(), polymorphic))
    return emitError(nodeLoc(index))
           << "calls function '" << printable(signature.name())
           << "', whose arguments' types or lengths are attributes; kiln inlines "
              "functions of one signature (a traced tf.function's)";
  arguments.clear();
  bodyOps.clear();
  argumentRead.clear();
  for (auto [arg, input] : llvm::zip(signature.input_arg(), data))
    arguments[arg.name()] = input;
  for (const tensorflow::NodeDef &body : function.node_def())
    bodyOps[body.name()] = body.op();

  std::vector<tensorflow::NodeDef> added;
  for (const tensorflow::NodeDef &body : function.node_def()) {
    tensorflow::NodeDef copy = body;
    copy.set_name(prefix + body.name());
    if (!names.insert(copy.name()).second)
      return emitError(nodeLoc(index))
             << "calls function '" << printable(signature.name()) << "', whose node '"
             << printable(body.name()) << "' inlined is named '" << printable(copy.name())
             << "', as another node is";
    copy.clear_input();
    for (const std::string &input : body.input()) {
      bool drop = false;
      FailureOr<std::string> translated = translate(input, drop);
      if (failed(translated))
        return failure();
      if (!drop)
        copy.add_input(*translated);
    }
    for (const auto &[name, value] : body.attr())
      if (value.value_case() == tensorflow::AttrValue::kPlaceholder)
        return emitError(nodeLoc(index))
               << "calls function '" << printable(signature.name()) << "', whose node '"
               << printable(body.name()) << "' leaves attribute '" << printable(name)
               << "' to the caller; kiln inlines functions of one signature";
    added.push_back(std::move(copy));
  }

  // The call becomes an IdentityN of the function's results.
  tensorflow::NodeDef results;
  results.set_name(node.name());
  results.set_op("IdentityN");
  tensorflow::AttrValue types;
  for (const tensorflow::OpDef::ArgDef &arg : signature.output_arg()) {
    auto ret = function.ret().find(arg.name());
    if (ret == function.ret().end())
      return emitError(nodeLoc(index))
             << "calls function '" << printable(signature.name()) << "', which returns "
             << "nothing for its result '" << printable(arg.name()) << "'";
    bool drop = false;
    FailureOr<std::string> translated = translate(ret->second, drop);
    if (failed(translated))
      return failure();
    if (drop)
      return emitError(nodeLoc(index))
             << "calls function '" << printable(signature.name()) << "', which returns a "
             << "control edge for its result '" << printable(arg.name()) << "'";
    results.add_input(*translated);
    types.mutable_list()->add_type(arg.type());
  }
  (*results.mutable_attr())["T"] = types;
  if (signature.output_arg_size() == 0) {
    // A call for its effects only: nothing reads it.
    results.set_op("NoOp");
    results.clear_attr();
  }
  node = std::move(results);

  LineCol line = index < static_cast<int>(file.nodeLines.size()) ? file.nodeLines[index]
                                                                   : LineCol{};
  for (tensorflow::NodeDef &body : added) {
    *graph.add_node() = std::move(body);
    file.nodeLines.push_back(line);
    depth.push_back(depth[index] + 1);
  }
  return success();
}

} // namespace

LogicalResult inlineTfFunctionCalls(TfGraphFile &file,
                                    llvm::function_ref<Location(int)> nodeLoc) {
  return CallInliner(file, nodeLoc).run();
}

} // namespace kiln
