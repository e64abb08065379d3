//===- Einsum.cpp - Einsum as transposes and one product ------------------===//
//
// Letters only one operand has and the output lacks are summed first; the
// rest are laid out as [batch, kept, contracted] and [batch, contracted,
// kept], reshaped to a (batched) matrix product, and the result transposed
// to the output's order.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Einsum.h"

#include "compiler/Import/DiagnosticText.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace kiln {
namespace {

using Result = KilnOpBuilder::Result;

/// One operand: its letters in order, and its value.
struct Term {
  std::string letters;
  Value value;
};

/// `term` summed over its letters not in `keep`.
FailureOr<Term> sumAway(KilnOpBuilder &b, Term term, llvm::StringRef keep) {
  SmallVector<int64_t> axes;
  std::string kept;
  for (auto [d, letter] : llvm::enumerate(term.letters)) {
    if (keep.contains(letter))
      kept.push_back(letter);
    else
      axes.push_back(static_cast<int64_t>(d));
  }
  if (axes.empty())
    return term;
  Result summed = b.reduce<ReduceSumOp>(term.value, axes, /*keepDims=*/false);
  if (failed(summed))
    return failure();
  return Term{kept, *summed};
}

/// `term` transposed to the letters of `order` (a permutation of its own).
Result permuteTo(KilnOpBuilder &b, const Term &term, llvm::StringRef order) {
  SmallVector<int64_t> perm;
  for (char letter : order)
    perm.push_back(static_cast<int64_t>(term.letters.find(letter)));
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return term.value;
  return b.transpose(term.value, perm);
}

/// The product of `sizes` of `letters`.
int64_t sizeOf(llvm::StringRef letters, const llvm::DenseMap<char, int64_t> &sizes) {
  int64_t n = 1;
  for (char letter : letters)
    n *= sizes.lookup(letter);
  return n;
}

} // namespace

LogicalResult buildEinsum(ImportNode &node, llvm::StringRef equation, unsigned operands) {
  std::string text;
  for (char c : equation)
    if (c != ' ')
      text.push_back(c);
  llvm::StringRef spec(text);
  auto [inputsText, outputText] = spec.split("->");
  bool explicitOutput = spec.contains("->");
  SmallVector<llvm::StringRef> inputTerms;
  inputsText.split(inputTerms, ',');
  auto refuse = [&](llvm::StringRef why) {
    return node.emitError() << "equation '" << printable(equation) << "': " << why;
  };
  if (spec.contains("..."))
    return refuse("an ellipsis is not supported (name every dimension)");
  if (inputTerms.size() != operands || operands < 1 || operands > 2)
    return refuse("kiln takes one or two operands, one term each");
  llvm::DenseMap<char, int64_t> sizes, counts;
  SmallVector<Term> terms;
  for (unsigned i = 0; i < operands; ++i) {
    Value value = node.getInput(i);
    if (failed(node.requireNumeric(value, "operands")))
      return failure();
    FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(value, "an operand");
    if (failed(shape))
      return failure();
    llvm::StringRef letters = inputTerms[i];
    if (letters.size() != shape->size())
      return refuse("term '" + letters.str() + "' names " + std::to_string(letters.size()) +
                    " dimensions of an operand of rank " + std::to_string(shape->size()));
    for (auto [d, letter] : llvm::enumerate(letters)) {
      if (!llvm::isAlpha(letter))
        return refuse("'" + std::string(1, letter) + "' is not a letter");
      if (letters.count(letter) > 1)
        return refuse("a letter repeated within one term (a diagonal) is not supported");
      auto [it, inserted] = sizes.try_emplace(letter, (*shape)[d]);
      if (!inserted && it->second != (*shape)[d])
        return refuse("'" + std::string(1, letter) + "' has sizes " +
                      std::to_string(it->second) + " and " + std::to_string((*shape)[d]));
      ++counts[letter];
    }
    terms.push_back({letters.str(), value});
  }
  std::string output;
  if (explicitOutput) {
    output = outputText.str();
    for (char letter : output)
      if (!sizes.count(letter) || llvm::StringRef(output).count(letter) > 1)
        return refuse("the output names '" + std::string(1, letter) +
                      "', which no operand has or it names twice");
  } else {
    // The implicit output: the letters used once, in alphabetical order.
    for (auto [letter, count] : counts)
      if (count == 1)
        output.push_back(letter);
    llvm::sort(output);
  }
  KilnOpBuilder &b = node.getBuilder();
  llvm::StringRef out(output);
  if (operands == 1) {
    FailureOr<Term> summed = sumAway(b, terms[0], out);
    return failed(summed) ? failure() : node.setResult(0, permuteTo(b, *summed, out));
  }
  // Letters only one operand has, and the output lacks, are summed first.
  std::string keepA = output + terms[1].letters, keepB = output + terms[0].letters;
  FailureOr<Term> a = sumAway(b, terms[0], keepA), c = sumAway(b, terms[1], keepB);
  if (failed(a) || failed(c))
    return failure();
  std::string batch, rows, contracted, columns;
  for (char letter : a->letters) {
    bool inB = llvm::StringRef(c->letters).contains(letter), inOut = out.contains(letter);
    (inB ? (inOut ? batch : contracted) : rows).push_back(letter);
  }
  for (char letter : c->letters)
    if (!llvm::StringRef(a->letters).contains(letter))
      columns.push_back(letter);
  int64_t batchSize = sizeOf(batch, sizes), m = sizeOf(rows, sizes), k = sizeOf(contracted, sizes),
          n = sizeOf(columns, sizes);
  Result lhs = permuteTo(b, *a, batch + rows + contracted);
  Result rhs = permuteTo(b, *c, batch + contracted + columns);
  SmallVector<int64_t> lhsShape = {m, k}, rhsShape = {k, n};
  if (!batch.empty()) {
    lhsShape.insert(lhsShape.begin(), batchSize);
    rhsShape.insert(rhsShape.begin(), batchSize);
  }
  if (succeeded(lhs))
    lhs = b.reshape(*lhs, lhsShape);
  if (succeeded(rhs))
    rhs = b.reshape(*rhs, rhsShape);
  Result product = succeeded(lhs) && succeeded(rhs) ? b.matmul(*lhs, *rhs) : Result(failure());
  if (failed(product))
    return failure();
  std::string order = batch + rows + columns;
  SmallVector<int64_t> productShape;
  for (char letter : order)
    productShape.push_back(sizes.lookup(letter));
  Result shaped = b.reshape(*product, productShape);
  if (failed(shaped))
    return failure();
  return node.setResult(0, permuteTo(b, Term{order, *shaped}, out));
}

} // namespace kiln
