// One request's uploads: private temporary files, gone when the request ends.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/pipeline.h"

namespace faultline {

// A name from the request (a multipart filename) made fit to show: its last path component, only
// letters, digits and ._+-@, no leading dot, at most 80 bytes; "upload" when nothing is left. It
// is only ever shown, never used as a path.
std::string shown_name(std::string_view requested);

// A private folder (mkdtemp, mode 0700) holding one request's uploads, each in a file made by
// mkstemp. The destructor removes the files and the folder, however the request ended.
class UploadFolder {
 public:
  // nullptr, with *error set, when the folder cannot be made.
  static std::unique_ptr<UploadFolder> Create(std::string* error);
  ~UploadFolder();
  UploadFolder(const UploadFolder&) = delete;
  UploadFolder& operator=(const UploadFolder&) = delete;

  // Starts a new file, shown in the report as `shown`; false, with *error set, on failure.
  bool Add(std::string shown, std::string* error);
  // Appends to the file started last; false, with *error set, when it cannot be written.
  bool Write(const char* data, size_t size, std::string* error);
  size_t count() const { return files_.size(); }
  uint64_t bytes() const { return bytes_; }
  // Closes the files; their paths, to hand to analyze().
  std::vector<std::string> Close();
  // Puts each file's shown name where the analysis names its path (inputs, evidence,
  // warnings), so that the answer never names the server's temporary folder.
  void ShowNames(Analysis* analysis) const;

 private:
  struct File {
    std::string path;
    std::string shown;
    int fd = -1;
  };
  explicit UploadFolder(std::string path) : path_(std::move(path)) {}

  std::string path_;
  std::vector<File> files_;
  uint64_t bytes_ = 0;
};

}  // namespace faultline
