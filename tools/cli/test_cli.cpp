// SPDX-License-Identifier: Apache-2.0
// The tools' shared command-line parsing: whole-text numbers in range, named in the message.
#include <sys/stat.h>
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli.hpp"

using Catch::Contains;
using xnorcl_cli::UsageError;

TEST_CASE("parse_int takes the whole text as a decimal in range", "[cli]") {
  CHECK(xnorcl_cli::parse_int("--reps", "20", 1, 1000) == 20);
  CHECK(xnorcl_cli::parse_int("--reps", "1000", 1, 1000) == 1000);
  CHECK(xnorcl_cli::parse_int("--x", "-3", -5, 5) == -3);
  CHECK_THROWS_WITH(xnorcl_cli::parse_int("--reps", "abc", 1, 1000),
                    "--reps needs an integer from 1 to 1000, not 'abc'");
  CHECK_THROWS_WITH(xnorcl_cli::parse_int("--reps", "0", 1, 1000), "--reps must be from 1 to 1000, not 0");
  CHECK_THROWS_WITH(xnorcl_cli::parse_int("--reps", "1001", 1, 1000),
                    "--reps must be from 1 to 1000, not 1001");
  for (const char* bad : {"", " 5", "5 ", "+5", "5x", "0x10", "1e3", "5.0"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(xnorcl_cli::parse_int("--reps", bad, 1, 1000), UsageError);
  }
  CHECK_THROWS_WITH(xnorcl_cli::parse_int("--n", "99999999999999999999", 0, 10),
                    Contains("--n must be from 0 to 10, not 99999999999999999999"));
}

TEST_CASE("parse_uint64 refuses signs instead of wrapping them around", "[cli]") {
  CHECK(xnorcl_cli::parse_uint64("--seed", "0") == 0);
  CHECK(xnorcl_cli::parse_uint64("--seed", "18446744073709551615") == 18446744073709551615ull);
  CHECK_THROWS_WITH(xnorcl_cli::parse_uint64("--seed", "-5"), Contains("--seed needs an integer"));
  CHECK_THROWS_WITH(xnorcl_cli::parse_uint64("--seed", "abc"), Contains("not 'abc'"));
  CHECK_THROWS_AS(xnorcl_cli::parse_uint64("--seed", "18446744073709551616"), UsageError);
}

TEST_CASE("parse_finite takes plain decimal numbers only", "[cli]") {
  CHECK(xnorcl_cli::parse_finite("--pad-value", "0.5") == 0.5);
  CHECK(xnorcl_cli::parse_finite("--pad-value", "-1") == -1.0);
  CHECK(xnorcl_cli::parse_finite("--pad-value", "1e-3") == 1e-3);
  for (const char* bad : {"", "nan", "inf", "-inf", "0x1p3", " 1", "1 ", "1,5", "1e999", "--1"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(xnorcl_cli::parse_finite("--pad-value", bad), UsageError);
  }
}

TEST_CASE("check_output_path refuses what cannot be written and leaves no file behind", "[cli]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "xnorcl_cli_test";
  fs::remove_all(dir);  // what an aborted run left
  fs::create_directories(dir);
  const fs::path fresh = dir / "fresh.json";
  fs::remove(fresh);
  CHECK_NOTHROW(xnorcl_cli::check_output_path("--json", fresh.string()));
  CHECK_FALSE(fs::exists(fresh));  // checked, not created
  const fs::path existing = dir / "existing.json";
  std::ofstream(existing) << "keep";
  CHECK_NOTHROW(xnorcl_cli::check_output_path("--json", existing.string()));
  CHECK(fs::file_size(existing) == 4);  // not truncated
  CHECK_THROWS_WITH(xnorcl_cli::check_output_path("--json", (dir / "missing" / "x.json").string()),
                    Contains("cannot be written"));
  CHECK_THROWS_WITH(xnorcl_cli::check_output_path("--json", dir.string()), Contains("is a directory"));
  CHECK_THROWS_WITH(xnorcl_cli::check_output_path("--json", ""), "--json needs a file name");
  // A dangling link is left as it is, its target not created.
  const fs::path link = dir / "link.json", target = dir / "target.json";
  fs::create_symlink(target, link);
  CHECK_NOTHROW(xnorcl_cli::check_output_path("--json", link.string()));
  CHECK(fs::is_symlink(link));
  CHECK_FALSE(fs::exists(target));
  fs::remove_all(dir);
}

TEST_CASE("check_output_path refuses a FIFO before anything would wait on it", "[cli]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "xnorcl_cli_fifo_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path fifo = dir / "report.json";
  fs::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Opening a FIFO for writing would wait for a reader: the check must not open it.
  CHECK_THROWS_WITH(xnorcl_cli::check_output_path("--json", fifo.string()),
                    Contains("is not a regular file"));
  const fs::path link = dir / "link.json";
  fs::create_symlink(fifo, link);
  CHECK_THROWS_WITH(xnorcl_cli::check_output_path("--json", link.string()),
                    Contains("is not a regular file"));
  fs::remove_all(dir);
}

TEST_CASE("write_output_file replaces the file whole and leaves no temporary behind", "[cli]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "xnorcl_cli_write_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out = dir / "report.csv";
  std::ofstream(out) << "an older, longer report";
  xnorcl_cli::write_output_file(out.string(), "a,b\n1,2\n");
  std::stringstream text;
  text << std::ifstream(out).rdbuf();
  CHECK(text.str() == "a,b\n1,2\n");
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
  CHECK_THROWS_WITH(xnorcl_cli::write_output_file((dir / "missing" / "x.csv").string(), "x"),
                    Contains("missing"));
  fs::remove_all(dir);
}
