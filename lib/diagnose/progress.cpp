#include "diagnose/progress.h"

namespace faultline {
namespace {

constexpr uint64_t kReportBytes = uint64_t{64} << 20;
constexpr auto kReportInterval = std::chrono::milliseconds(250);
// Lines between two looks at the clock: reading the clock per line would cost more than the
// progress line is worth.
constexpr uint64_t kLinesPerClockCheck = 1024;

// Passes every call through to the reader it wraps, telling the tracker after each line.
class ReportingReader : public LineReader {
 public:
  ReportingReader(std::unique_ptr<LineReader> inner, ProgressTracker* tracker)
      : inner_(std::move(inner)), tracker_(tracker) {}

  bool Next(Line* line) override {
    if (!inner_->Next(line)) return false;
    tracker_->Update(inner_->path(), inner_->bytes());
    return true;
  }
  const std::string& path() const override { return inner_->path(); }
  std::string_view compression() const override { return inner_->compression(); }
  uint64_t bytes() const override { return inner_->bytes(); }
  uint64_t lines() const override { return inner_->lines(); }
  uint64_t cut_lines() const override { return inner_->cut_lines(); }
  const std::string& error() const override { return inner_->error(); }

 private:
  std::unique_ptr<LineReader> inner_;
  ProgressTracker* tracker_;
};

}  // namespace

void ProgressTracker::Update(const std::string& path, uint64_t bytes) {
  const uint64_t total = done_ + bytes;
  const bool enough_bytes = total - reported_ >= kReportBytes;
  if (!enough_bytes && ++updates_ % kLinesPerClockCheck != 0) return;
  const Clock::time_point now = Clock::now();
  if (!enough_bytes && now - last_ < kReportInterval) return;
  reported_ = total;
  last_ = now;
  progress_(path, total);
}

std::unique_ptr<LineReader> ProgressTracker::Wrap(std::unique_ptr<LineReader> reader) {
  return std::make_unique<ReportingReader>(std::move(reader), this);
}

}  // namespace faultline
