// A scratch folder for the tests of the file-reading datasets.
#ifndef SLUICE_SRC_DATA_SOURCES_TEST_UTIL_H_
#define SLUICE_SRC_DATA_SOURCES_TEST_UTIL_H_

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace sluice::data::testing {

// A fresh folder under $TEST_TMPDIR (or /tmp), removed with its files.
class ScratchDir {
 public:
  ScratchDir() {
    const char* base = std::getenv("TEST_TMPDIR");
    std::string tmpl = std::string(base != nullptr ? base : "/tmp") + "/sluice_data_test_XXXXXX";
    path_ = ::mkdtemp(tmpl.data()) != nullptr ? tmpl : "";
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::string Path(const std::string& name) const { return path_ + "/" + name; }
  // Writes `contents` to `name`; its path.
  std::string Write(const std::string& name, const std::string& contents) const {
    std::ofstream(Path(name), std::ios::binary) << contents;
    return Path(name);
  }

 private:
  std::string path_;
};

}  // namespace sluice::data::testing

#endif  // SLUICE_SRC_DATA_SOURCES_TEST_UTIL_H_
