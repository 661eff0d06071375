#include "serve/uploads.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>

namespace faultline {
namespace {

constexpr size_t kMaxShownBytes = 80;

void replace_all(std::string* text, const std::string& from, const std::string& to) {
  for (size_t at = text->find(from); at != std::string::npos; at = text->find(from, at)) {
    text->replace(at, from.size(), to);
    at += to.size();
  }
}

// Calls `edit` on every string of the analysis that may name an input's path.
void each_path_string(Analysis* analysis, const std::function<void(std::string*)>& edit) {
  for (InputSummary& input : analysis->inputs) {
    edit(&input.path);
    edit(&input.error);
  }
  for (std::string& warning : analysis->warnings) edit(&warning);
  for (Event& event : analysis->events) event.evidence.path.rewrite(edit);
  for (GpuState& state : analysis->states) state.source.path.rewrite(edit);
  for (Series& series : analysis->series) edit(&series.path);
  for (LossLogger& logger : analysis->loss_loggers) edit(&logger.path);
  for (Diagnosis& diagnosis : analysis->diagnoses) {
    for (Evidence& evidence : diagnosis.evidence) evidence.path.rewrite(edit);
    for (SharedText& note : diagnosis.notes) note.rewrite(edit);
    for (SharedText& missing : diagnosis.missing) missing.rewrite(edit);
  }
}

}  // namespace

std::string shown_name(std::string_view requested) {
  const size_t slash = requested.find_last_of("/\\");
  if (slash != std::string_view::npos) requested.remove_prefix(slash + 1);
  std::string shown;
  for (const char c : requested) {
    if (shown.size() == kMaxShownBytes) break;
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       std::strchr("._+-@", c) != nullptr;
    if (c == '.' && shown.empty()) continue;
    shown += plain ? c : '_';
  }
  return shown.empty() ? "upload" : shown;
}

std::unique_ptr<UploadFolder> UploadFolder::Create(std::string* error) {
  std::error_code ec;
  std::string folder =
      (std::filesystem::temp_directory_path(ec) / "faultline-serve-XXXXXX").string();
  if (ec || mkdtemp(folder.data()) == nullptr) {
    *error = "cannot make a temporary folder: " + std::string(std::strerror(errno));
    return nullptr;
  }
  return std::unique_ptr<UploadFolder>(new UploadFolder(std::move(folder)));
}

UploadFolder::~UploadFolder() {
  for (const File& file : files_) {
    if (file.fd >= 0) close(file.fd);
    unlink(file.path.c_str());
  }
  rmdir(path_.c_str());
}

bool UploadFolder::Add(std::string shown, std::string* error) {
  std::string path = path_ + "/upload-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0) {
    *error = "cannot make a temporary file: " + std::string(std::strerror(errno));
    return false;
  }
  files_.push_back({std::move(path), std::move(shown), fd});
  return true;
}

bool UploadFolder::Write(const char* data, size_t size, std::string* error) {
  if (files_.empty()) return false;
  const int fd = files_.back().fd;
  bytes_ += size;
  while (size > 0) {
    const ssize_t written = write(fd, data, size);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      *error = "cannot write a temporary file: " + std::string(std::strerror(errno));
      return false;
    }
    data += written;
    size -= static_cast<size_t>(written);
  }
  return true;
}

std::vector<std::string> UploadFolder::Close() {
  std::vector<std::string> paths;
  for (File& file : files_) {
    if (file.fd >= 0) close(file.fd);
    file.fd = -1;
    paths.push_back(file.path);
  }
  return paths;
}

void UploadFolder::ShowNames(Analysis* analysis) const {
  each_path_string(analysis, [&](std::string* text) {
    for (const File& file : files_) replace_all(text, file.path, file.shown);
  });
}

}  // namespace faultline
