// Tests of leap::toml_schema: hand-written TOML texts against small schemas, checking the exact
// error text (wrong type, out of range, unknown key with and without a suggestion, missing
// required keys and tables, nested tables, arrays of tables, lists), the values read, and the
// command-line value parser.
#include "common/toml_schema.hpp"

#include <gtest/gtest.h>

namespace leap::toml_schema {
namespace {

// A schema shaped like a small run config: [train] and [bench] with a nested table and an array
// of tables.
const table_schema& demo_schema() {
  static const table_schema s = [] {
    table_schema root;
    root.key("name", value_kind::string, "the run's name").required().non_empty();
    root.key("level", value_kind::integer).at_least(1).at_most(3);
    auto& train = root.table("train");
    train.key("steps", value_kind::integer).at_least(1).fits<int>();
    train.key("lr", value_kind::floating).greater_than(0);
    train.key("top_p", value_kind::floating).greater_than(0).at_most(1);
    train.key("dcp", value_kind::boolean);
    train.key("mode", value_kind::string).one_of({"async", "sync"});
    train.key("flags", value_kind::string_list).distinct();
    auto& bench = root.table("bench", "the latency models", true);
    bench.key("nodes", value_kind::integer_list).non_empty().at_least(0).at_most(16);
    auto& compile = bench.table("compile");
    compile.key("sigma", value_kind::floating).at_least(0);
    auto& tasks = bench.table_array("tasks", "the synthetic task classes", 1);
    tasks.key("name", value_kind::string).required();
    tasks.key("success", value_kind::float_list).non_empty().at_least(0).at_most(1);
    return root;
  }();
  return s;
}

const char* ok_text = R"(name = "demo"
level = 2

[train]
steps = 10
lr = 1e-3
top_p = 1
dcp = false
mode = "sync"
flags = ["-O3", "-g"]

[bench]
nodes = [0, 2]

[bench.compile]
sigma = 0.5

[[bench.tasks]]
name = "easy"
success = [0.9, 1]

[[bench.tasks]]
name = "hard"
success = [0.1]
)";

// The error text of checking `text` against the demo schema ("" when it passes).
std::string errors_of(const std::string& text) {
  auto t = parse(text, "x.toml");
  if (!t) return t.message();
  diagnostics diag("x.toml");
  check(*t, demo_schema(), diag);
  return diag.text();
}

// `ok_text` with `from` replaced by `to`.
std::string edited(const std::string& from, const std::string& to) {
  std::string s = ok_text;
  auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

TEST(TomlSchema, ReadsEveryKindAndNestedTables) {
  auto t = parse(ok_text, "x.toml");
  ASSERT_TRUE(t.ok()) << t.message();
  diagnostics diag("x.toml");
  checked_table c = check(*t, demo_schema(), diag);
  ASSERT_TRUE(diag.empty()) << diag.text();
  EXPECT_EQ(c.get<std::string>("name"), "demo");
  EXPECT_EQ(c.get<std::int64_t>("level"), 2);
  const checked_table* train = c.table("train");
  ASSERT_NE(train, nullptr);
  EXPECT_EQ(train->get<std::int64_t>("steps"), 10);
  EXPECT_EQ(train->get<double>("top_p"), 1.0); // an integer for a float key
  EXPECT_EQ(train->get<bool>("dcp"), false);
  EXPECT_EQ(train->get<std::string>("mode"), "sync");
  EXPECT_EQ(train->get<std::vector<std::string>>("flags"), (std::vector<std::string>{"-O3", "-g"}));
  EXPECT_EQ(train->get<double>("absent"), std::nullopt);
  const checked_table* bench = c.table("bench");
  ASSERT_NE(bench, nullptr);
  EXPECT_EQ(bench->get<std::vector<std::int64_t>>("nodes"), (std::vector<std::int64_t>{0, 2}));
  ASSERT_NE(bench->table("compile"), nullptr);
  EXPECT_EQ(bench->table("compile")->get<double>("sigma"), 0.5);
  const auto& tasks = bench->array("tasks");
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[1].get<std::string>("name"), "hard");
  EXPECT_EQ(tasks[0].get<std::vector<double>>("success"), (std::vector<double>{0.9, 1.0}));
  EXPECT_EQ(tasks[1].path.dotted(), "bench.tasks[1]");
  EXPECT_EQ(tasks[1].position().line, 22u);
}

TEST(TomlSchema, WrongTypes) {
  EXPECT_EQ(errors_of(edited("steps = 10", "steps = \"ten\"")),
            "x.toml:5:9: [train] steps: expected an integer, got a string (\"ten\")");
  EXPECT_EQ(errors_of(edited("steps = 10", "steps = 2.5")),
            "x.toml:5:9: [train] steps: expected an integer, got a float (2.5)");
  EXPECT_EQ(errors_of(edited("dcp = false", "dcp = 0")),
            "x.toml:8:7: [train] dcp: expected a boolean (true or false), got an integer (0)");
  EXPECT_EQ(errors_of(edited("lr = 1e-3", "lr = \"fast\"")),
            "x.toml:6:6: [train] lr: expected a number, got a string (\"fast\")");
  EXPECT_EQ(errors_of(edited("name = \"demo\"", "name = 2024-01-01")),
            "x.toml:1:8: name: expected a string, got a date");
  EXPECT_EQ(errors_of(edited("flags = [\"-O3\", \"-g\"]", "flags = \"-O3\"")),
            "x.toml:10:9: [train] flags: expected an array of strings such as [\"-O3\", \"-g\"], "
            "got a string (\"-O3\")");
}

TEST(TomlSchema, ListElementsAreCheckedAtTheirPosition) {
  EXPECT_EQ(errors_of(edited("flags = [\"-O3\", \"-g\"]", "flags = [\"-O3\", 3]")),
            "x.toml:10:17: [train] flags: element [1]: expected a string, got an integer (3)");
  EXPECT_EQ(errors_of(edited("flags = [\"-O3\", \"-g\"]", "flags = [\"-g\", \"-O3\", \"-g\"]")),
            "x.toml:10:23: [train] flags: element [2]: \"-g\" is listed twice");
  EXPECT_EQ(errors_of(edited("nodes = [0, 2]", "nodes = [0, 17]")),
            "x.toml:13:13: [bench] nodes: element [1]: must be between 0 and 16 (got 17)");
  EXPECT_EQ(errors_of(edited("nodes = [0, 2]", "nodes = []")),
            "x.toml:13:9: [bench] nodes: must not be empty");
  EXPECT_EQ(errors_of(edited("success = [0.9, 1]", "success = [0.9, 1.5]")),
            "x.toml:20:17: [bench.tasks[0]] success: element [1]: must be between 0 and 1 (got "
            "1.5)");
}

TEST(TomlSchema, OutOfRange) {
  EXPECT_EQ(errors_of(edited("steps = 10", "steps = 0")),
            "x.toml:5:9: [train] steps: must be at least 1 (got 0)");
  EXPECT_EQ(errors_of(edited("steps = 10", "steps = 10000000000")),
            "x.toml:5:9: [train] steps: must be between -2147483648 and 2147483647 (got "
            "10000000000)");
  EXPECT_EQ(errors_of(edited("lr = 1e-3", "lr = 0.0")),
            "x.toml:6:6: [train] lr: must be greater than 0 (got 0.0)");
  EXPECT_EQ(errors_of(edited("lr = 1e-3", "lr = nan")),
            "x.toml:6:6: [train] lr: must be a finite number (got nan)");
  EXPECT_EQ(errors_of(edited("top_p = 1", "top_p = 1.5")),
            "x.toml:7:9: [train] top_p: must be greater than 0 and at most 1 (got 1.5)");
  EXPECT_EQ(errors_of(edited("level = 2", "level = 4")),
            "x.toml:2:9: level: must be between 1 and 3 (got 4)");
  EXPECT_EQ(errors_of(edited("mode = \"sync\"", "mode = \"fast\"")),
            "x.toml:9:8: [train] mode: must be one of \"async\", \"sync\" (got \"fast\")");
  EXPECT_EQ(errors_of(edited("name = \"demo\"", "name = \"\"")),
            "x.toml:1:8: name: must not be empty");
}

TEST(TomlSchema, UnknownKeys) {
  EXPECT_EQ(errors_of(edited("steps = 10", "setps = 10")),
            "x.toml:5:1: [train] setps: unknown key; did you mean 'steps'?");
  EXPECT_EQ(errors_of(edited("steps = 10", "colour = 10")),
            "x.toml:5:1: [train] colour: unknown key; known keys: steps, lr, top_p, dcp, mode, "
            "flags");
  EXPECT_EQ(errors_of(edited("[bench.compile]", "[bench.compiel]")),
            "x.toml:15:8: [bench.compiel]: unknown table; did you mean [bench.compile]?");
  EXPECT_EQ(errors_of(edited("name = \"easy\"", "name = \"easy\"\ncount = 3")),
            "x.toml:20:1: [bench.tasks[0]] count: unknown key; known keys: name, success");
  EXPECT_EQ(errors_of(edited("level = 2", "levle = 2")),
            "x.toml:2:1: levle: unknown key; did you mean 'level'?");
  EXPECT_EQ(errors_of(edited("[[bench.tasks]]\nname = \"hard\"",
                             "[[bench.taks]]\nname = \"hard\"")),
            "x.toml:22:9: [[bench.taks]]: unknown table; did you mean [[bench.tasks]]?");
}

TEST(TomlSchema, MissingRequiredKeysAndTables) {
  EXPECT_EQ(errors_of(edited("name = \"demo\"\n", "")),
            "x.toml:1:1: name: missing required key (the run's name)");
  EXPECT_EQ(errors_of(edited("name = \"hard\"\n", "")),
            "x.toml:22:1: [bench.tasks[1]] name: missing required key");
  EXPECT_EQ(errors_of("name = \"x\"\n"),
            "x.toml:1:1: bench: missing required table [bench] (the latency models)");
  EXPECT_EQ(errors_of("name = \"x\"\n[bench]\nnodes = [1]\n"),
            "x.toml:2:1: [bench] tasks: missing required array of tables [[bench.tasks]] (the "
            "synthetic task classes)");
}

TEST(TomlSchema, TablesOfTheWrongShape) {
  EXPECT_EQ(errors_of("name = \"x\"\ntrain = 3\n[bench]\n[[bench.tasks]]\nname = \"a\"\n"),
            "x.toml:2:9: train: expected a table ([train]), got an integer (3)");
  EXPECT_EQ(errors_of("name = \"x\"\n[bench]\ntasks = [1]\n"),
            "x.toml:3:10: [bench] tasks: element [0]: expected a table, got an integer (1)");
  EXPECT_EQ(errors_of("name = \"x\"\n[bench]\ntasks = []\n"),
            "x.toml:3:9: [bench] tasks: expected at least 1 [[bench.tasks]] tables, got 0 (the "
            "synthetic task classes)");
  EXPECT_EQ(errors_of("name = \"x\"\n[bench]\ntasks = \"a\"\n"),
            "x.toml:3:9: [bench] tasks: expected an array of tables ([[bench.tasks]]), got a "
            "string (\"a\")");
}

TEST(TomlSchema, AllErrorsInFileOrder) {
  std::string text = edited("steps = 10", "steps = 0");
  text = text.replace(text.find("level = 2"), 9, "level = \"2\"");
  text = text.replace(text.find("sigma = 0.5"), 11, "sigma = -1");
  EXPECT_EQ(errors_of(text), "x.toml:2:9: level: expected an integer, got a string (\"2\")\n"
                             "x.toml:5:9: [train] steps: must be at least 1 (got 0)\n"
                             "x.toml:16:9: [bench.compile] sigma: must be at least 0 (got -1.0)");
}

TEST(TomlSchema, SkippedOpenAndHintedTables) {
  table_schema s;
  s.key("a", value_kind::integer);
  s.skipped = {"other"};
  auto& free = s.table("free");
  free.open = true;
  free.key("n", value_kind::integer);
  s.unknown_hint = [](std::string_view key, bool) {
    return key == "unrelated" ? std::string("it belongs in [free]") : std::string();
  };
  auto t = parse("a = 1\nunrelated = 2\n[other]\nanything = 1\n[free]\nwhatever = \"x\"\n"
                 "n = \"1\"\n", "y.toml");
  ASSERT_TRUE(t.ok());
  diagnostics diag("y.toml");
  checked_table c = check(*t, s, diag);
  // [other] is skipped; [free] takes any key but still checks the ones it declares.
  EXPECT_EQ(diag.text(), "y.toml:2:1: unrelated: unknown key; it belongs in [free]\n"
                         "y.toml:7:5: [free] n: expected an integer, got a string (\"1\")");
  ASSERT_NE(c.table("free"), nullptr);
  EXPECT_TRUE(c.table("free")->keys.empty());
  EXPECT_EQ(c.table("free")->node("whatever")->value<std::string>(), "x");
}

TEST(TomlSchema, DiagnosticsPutUnlocatedErrorsFirst) {
  diagnostics d("f.toml");
  d.add(toml::source_position{3, 4}, key_path().child("a").key("b"), "bad");
  d.add_unlocated("no [x] section");
  d.add(toml::source_position{1, 2}, "c", "worse");
  EXPECT_EQ(d.text(), "f.toml: no [x] section\nf.toml:1:2: c: worse\nf.toml:3:4: [a] b: bad");
  EXPECT_EQ(key_path().child("a").element(2).child("b").key("c"), "[a[2].b] c");
}

TEST(TomlSchema, SyntaxErrorsAndMissingFiles) {
  auto r = parse("a = = 1\n", "s.toml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message().rfind("s.toml:1:", 0), 0u) << r.message();
  EXPECT_NE(r.message().find(": TOML syntax error: "), std::string::npos) << r.message();
  auto f = parse_file("/nonexistent/x.toml", "scenario file");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.message().rfind("/nonexistent/x.toml: cannot open scenario file: ", 0), 0u)
      << f.message();
}

TEST(TomlSchema, CommandLineValues) {
  key_rule n;
  n.kind = value_kind::integer;
  EXPECT_EQ(std::get<std::int64_t>(*parse_value_text(n, " 4 ")), 4);
  EXPECT_EQ(parse_value_text(n, "abc").message(), "expected an integer, got 'abc'");
  EXPECT_EQ(parse_value_text(n, "").message(), "expected an integer, got nothing");
  EXPECT_EQ(parse_value_text(n, "2.5").message(), "expected an integer, got a float (2.5)");
  key_rule s;
  s.kind = value_kind::string;
  EXPECT_EQ(std::get<std::string>(*parse_value_text(s, "sm_80")), "sm_80");
  EXPECT_EQ(std::get<std::string>(*parse_value_text(s, "\"a b\"")), "a b");
  key_rule f;
  f.kind = value_kind::float_list;
  EXPECT_EQ(std::get<std::vector<double>>(*parse_value_text(f, "[1, 0.5]")),
            (std::vector<double>{1.0, 0.5}));
  EXPECT_EQ(parse_value_text(f, "0.5").message(),
            "expected an array of numbers such as [0.5, 1], got '0.5'");
  f.min = 0;
  f.max = 1;
  auto issue = check_value(f, value(std::vector<double>{0.5, 2.0}));
  ASSERT_TRUE(issue);
  EXPECT_EQ(issue->detail, "element [1]: must be between 0 and 1 (got 2.0)");
  EXPECT_EQ(issue->element, 1u);
  EXPECT_EQ(value_to_toml(value(std::vector<std::int64_t>{1, 2})), "[1, 2]");
}

TEST(TomlSchema, AKeyOfTwoShapes) {
  // seeds: a list of distinct seeds, or a count.
  table_schema s;
  key_rule count;
  count.min = 1;
  count.max = 1000;
  s.key("seeds", value_kind::integer_list).distinct().at_least(0)
      .or_else(value_kind::integer, count);
  auto errors = [&](const std::string& text) {
    auto t = parse(text, "e.toml");
    diagnostics diag("e.toml");
    check(*t, s, diag);
    return diag.text();
  };
  auto t = parse("seeds = 3\n", "e.toml");
  diagnostics diag("e.toml");
  EXPECT_EQ(check(*t, s, diag).get<std::int64_t>("seeds"), 3);
  t = parse("seeds = [4, 5]\n", "e.toml");
  EXPECT_EQ(check(*t, s, diag).get<std::vector<std::int64_t>>("seeds"),
            (std::vector<std::int64_t>{4, 5}));
  EXPECT_TRUE(diag.empty()) << diag.text();
  EXPECT_EQ(errors("seeds = 0\n"), "e.toml:1:9: seeds: must be between 1 and 1000 (got 0)");
  EXPECT_EQ(errors("seeds = [1, 1]\n"), "e.toml:1:13: seeds: element [1]: 1 is listed twice");
  EXPECT_EQ(errors("seeds = [1, \"2\"]\n"),
            "e.toml:1:13: seeds: element [1]: expected an integer, got a string (\"2\")");
  EXPECT_EQ(errors("seeds = \"3\"\n"),
            "e.toml:1:9: seeds: expected an array of integers such as [1, 2] or an integer, got a "
            "string (\"3\")");
}

TEST(TomlSchema, Suggestions) {
  EXPECT_EQ(edit_distance("wrokers", "workers"), 1u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(closest_match("trails", {"workers", "trials"}), std::optional<std::string>("trials"));
  EXPECT_EQ(closest_match("zzz", {"workers", "trials"}), std::nullopt);
  EXPECT_EQ(closest_match("trials", {"trials"}), std::nullopt); // an exact name is no typo
}

} // namespace
} // namespace leap::toml_schema
