// Output files written atomically: into a temporary file of their own beside the target, then
// renamed over it; no other file is touched.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

#include "engine/core/errors.h"
#include "engine/core/files.h"

namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::set<std::string> names(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

}  // namespace

TEST_CASE("write_file_atomic leaves a user's FILE.tmp beside FILE alone and leaves no file of its own") {
  const fs::path dir = fs::temp_directory_path() / ("cfr-files-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path file = dir / "meta.json", users = dir / "meta.json.tmp";
  std::ofstream(users) << "the user's own file\n";
  cfr::write_file_atomic(file.string(), "first\n");
  cfr::write_file_atomic(file.string(), "second\n");  // replaces the first
  CHECK(read(file) == "second\n");
  CHECK(read(users) == "the user's own file\n");
  CHECK(names(dir) == std::set<std::string>{"meta.json", "meta.json.tmp"});
  // The mode a plain write gives (0644 less the umask), not mkstemp's 0600.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  struct stat st {};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == (0644 & ~mask));
  // A folder that does not exist: InputError naming the file, nothing written.
  CHECK_THROWS_AS(cfr::write_file_atomic((dir / "no_dir" / "x.json").string(), "x"), cfr::InputError);
  CHECK(names(dir) == std::set<std::string>{"meta.json", "meta.json.tmp"});
  fs::remove_all(dir);
}
