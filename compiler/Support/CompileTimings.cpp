//===- CompileTimings.cpp - Where kilnc's time goes -----------------------===//

#include "compiler/Support/CompileTimings.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "llvm/ADT/DenseMap.h"

#include <atomic>
#include <thread>

using namespace mlir;

namespace kiln {
namespace {

std::atomic<CompileTimings *> activeTimings{nullptr};

using Clock = std::chrono::steady_clock;

/// Starts a clock before each pass and adds its time after it; passes on
/// different operations may run on different threads at once.
class PassTimer : public PassInstrumentation {
public:
  explicit PassTimer(CompileTimings &timings) : timings(timings) {}
  void runBeforePass(Pass *pass, Operation *op) override {
    std::lock_guard<std::mutex> lock(mutex);
    started[{pass, op}] = Clock::now();
  }
  void runAfterPass(Pass *pass, Operation *op) override { finish(pass, op); }
  void runAfterPassFailed(Pass *pass, Operation *op) override { finish(pass, op); }

private:
  void finish(Pass *pass, Operation *op) {
    Clock::time_point begin;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = started.find({pass, op});
      if (it == started.end())
        return;
      begin = it->second;
      started.erase(it);
    }
    llvm::StringRef name = pass->getArgument();
    timings.add(name.empty() ? pass->getName() : name,
                std::chrono::duration<double>(Clock::now() - begin).count());
  }

  CompileTimings &timings;
  std::mutex mutex;
  llvm::DenseMap<std::pair<Pass *, Operation *>, Clock::time_point> started;
};

} // namespace

CompileTimings *CompileTimings::active() { return activeTimings.load(); }

void CompileTimings::setActive(CompileTimings *timings) { activeTimings.store(timings); }

void CompileTimings::add(llvm::StringRef name, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto &[entry, total] : entries_)
    if (entry == name) {
      total += seconds;
      return;
    }
  entries_.emplace_back(name.str(), seconds);
}

void CompileTimings::instrument(PassManager &pm) {
  pm.addInstrumentation(std::make_unique<PassTimer>(*this));
}

std::vector<std::pair<std::string, double>> CompileTimings::entries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_;
}

CompileTimings::Phase::~Phase() {
  if (CompileTimings *timings = active())
    timings->add(name_, std::chrono::duration<double>(Clock::now() - begin_).count());
}

} // namespace kiln
