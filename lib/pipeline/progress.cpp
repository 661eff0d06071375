#include "pipeline/progress.h"

namespace faultline {
namespace {

constexpr uint64_t kReportBytes = uint64_t{64} << 20;
constexpr auto kReportInterval = std::chrono::milliseconds(250);
// Lines between two reports: reading the clock per line would cost more than the progress line
// is worth.
constexpr uint64_t kLinesPerClockCheck = 1024;

// Passes every call through to the reader it wraps, telling the tracker every so many lines
// and at the end.
class ReportingReader : public LineReader {
 public:
  ReportingReader(std::unique_ptr<LineReader> inner, ProgressTracker* tracker)
      : inner_(std::move(inner)), tracker_(tracker) {}

  bool Next(Line* line) override {
    const bool more = inner_->Next(line);
    if (!more || ++lines_ % kLinesPerClockCheck == 0) {
      tracker_->Add(inner_->path(), inner_->bytes() - sent_);
      sent_ = inner_->bytes();
    }
    return more;
  }
  const std::string& path() const override { return inner_->path(); }
  std::string_view compression() const override { return inner_->compression(); }
  uint64_t bytes() const override { return inner_->bytes(); }
  uint64_t lines() const override { return inner_->lines(); }
  uint64_t cut_lines() const override { return inner_->cut_lines(); }
  const std::string& error() const override { return inner_->error(); }
  std::string notice() const override { return inner_->notice(); }

 private:
  std::unique_ptr<LineReader> inner_;
  ProgressTracker* tracker_;
  uint64_t lines_ = 0;
  uint64_t sent_ = 0;  // bytes reported so far
};

}  // namespace

void ProgressTracker::Add(const std::string& path, uint64_t more) {
  std::lock_guard lock(mutex_);
  total_ += more;
  const Clock::time_point now = Clock::now();
  if (total_ - reported_ < kReportBytes && now - last_ < kReportInterval) return;
  reported_ = total_;
  last_ = now;
  progress_(path, total_);
}

std::unique_ptr<LineReader> ProgressTracker::Wrap(std::unique_ptr<LineReader> reader) {
  return std::make_unique<ReportingReader>(std::move(reader), this);
}

}  // namespace faultline
