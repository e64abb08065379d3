//===- OneLineDiagnostics.cpp - One line per error for tools --------------===//

#include "compiler/Support/OneLineDiagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"

using namespace mlir;

namespace kiln {
namespace {

/// The file position and the labels (outermost first) of a location.
struct Place {
  std::string position;
  SmallVector<std::string> labels;
};

void collect(Location loc, Place &place) {
  if (auto name = llvm::dyn_cast<NameLoc>(loc)) {
    place.labels.push_back(name.getName().str());
    collect(name.getChildLoc(), place);
  } else if (auto file = llvm::dyn_cast<FileLineColLoc>(loc)) {
    if (!place.position.empty())
      return;
    place.position = file.getFilename().str();
    if (file.getLine() != 0)
      place.position += ":" + std::to_string(file.getLine()) + ":" +
                        std::to_string(file.getColumn());
  } else if (auto fused = llvm::dyn_cast<FusedLoc>(loc)) {
    if (!fused.getLocations().empty())
      collect(fused.getLocations().front(), place);
  } else if (auto call = llvm::dyn_cast<CallSiteLoc>(loc)) {
    collect(call.getCallee(), place);
  }
}

StringRef severityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Note:
    return "note";
  case DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

} // namespace

std::string formatOneLine(Diagnostic &diag) {
  Place place;
  collect(diag.getLocation(), place);
  std::string line;
  llvm::raw_string_ostream os(line);
  if (!place.position.empty())
    os << place.position << ": ";
  os << severityName(diag.getSeverity()) << ": ";
  for (const std::string &label : place.labels)
    os << label << ": ";
  std::string message = diag.str();
  // One line even if a message embeds newlines (e.g. printed IR).
  for (char &c : message)
    if (c == '\n')
      c = ' ';
  os << message;
  return line;
}

OneLineDiagnosticHandler::OneLineDiagnosticHandler(MLIRContext *context,
                                                   llvm::raw_ostream &os)
    : ScopedDiagnosticHandler(context), os(os) {
  setHandler([this](Diagnostic &diag) {
    switch (diag.getSeverity()) {
    case DiagnosticSeverity::Error:
      if (errorCount++ == 0)
        this->os << formatOneLine(diag) << "\n";
      break;
    case DiagnosticSeverity::Warning:
      ++warningCount;
      this->os << formatOneLine(diag) << "\n";
      break;
    default:
      break;
    }
    return success();
  });
}

} // namespace kiln
