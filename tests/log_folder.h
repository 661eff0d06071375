// A temporary folder of log files for a test, removed when the test ends.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace faultline {

class LogFolder {
 public:
  LogFolder() {
    path_ = std::filesystem::temp_directory_path() /
            ("faultline-logs-" + std::to_string(getpid()) + "-" +
             std::to_string(reinterpret_cast<uintptr_t>(this)));
    std::filesystem::create_directories(path_);
  }
  ~LogFolder() { std::filesystem::remove_all(path_); }
  LogFolder(const LogFolder&) = delete;
  LogFolder& operator=(const LogFolder&) = delete;

  // Writes `text` to `name` (sub-folders made as needed); returns the file's path.
  std::string Write(const std::string& name, const std::string& text) {
    const std::filesystem::path file = path_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
    return file.string();
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace faultline
