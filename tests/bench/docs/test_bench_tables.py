"""Tests of the benchmark tables' check (scripts/bench_docs.py): the repository's own docs pass
it, and each kind of fault it exists for makes it fail. Fast: no benchmark runs.

Run by CTest (tests/bench/docs/CMakeLists.txt) as `python3 -m unittest test_bench_tables` with
LEAP_SOURCE_DIR set to the repository root.
"""
import os
import sys
import tempfile
import unittest

ROOT = os.environ.get("LEAP_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench_docs  # noqa: E402

STAMP = bench_docs.render_stamp(
    {"date": "2026-12-04 15:21 UTC", "commit": "5f479aa3c1d2", "dirty": True, "cpu": "Some CPU", "cores": 2,
     "load": (2.63, 1.73, 1.02), "command": "build/bench/bench_x --benchmark_filter=y"}, "a test")
TABLE = "| a | b |\n|---|---:|\n| x | 1 |\n"
GENERATED = STAMP + "\n" + TABLE


def doc(*parts):
    return "\n".join(parts) + "\n"


class Fixture(unittest.TestCase):
    """A throwaway repository: docs/results.md, docs/bench.md and docs/bench/*.md."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        os.makedirs(os.path.join(self.root, "docs", "bench"))
        self.write("docs/bench.md", "# Benchmarks\n")
        self.write("docs/bench/x.md", GENERATED)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, rel, text):
        with open(os.path.join(self.root, rel), "w") as f:
            f.write(text)

    def read(self, rel):
        with open(os.path.join(self.root, rel)) as f:
            return f.read()

    def results(self, *body):
        self.write("docs/results.md", doc("# Measured results", "", "## Benchmarks", "", *body,
                                          "## Later", "", TABLE))

    def problems(self, **kw):
        kw.setdefault("sections", [("docs/results.md", "## Benchmarks")])
        return bench_docs.check(self.root, **kw)


def block(target, content):
    return [f"<!-- bench-table: {target} -->", content.rstrip("\n"), "<!-- end bench-table -->", ""]


class CheckTest(Fixture):
    def test_a_block_equal_to_its_stamped_file_passes(self):
        self.results("Prose.", "", *block("docs/bench/x.md", GENERATED))
        self.assertEqual(self.problems(), [])

    def test_a_table_outside_a_block_in_the_section_fails(self):
        self.results("Prose.", "", TABLE)
        problems = self.problems()
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("docs/results.md:7: a table in '## Benchmarks' outside a bench-table block", problems[0])

    def test_tables_in_other_sections_and_code_blocks_are_not_checked(self):
        self.results("```", TABLE.rstrip("\n"), "```", "")
        self.assertEqual(self.problems(), [])

    def test_markers_in_a_code_block_are_examples(self):
        self.results("```", "<!-- bench-table: docs/bench/nothing.md -->", "<!-- end bench-table -->", "```", "")
        self.assertEqual(self.problems(), [])
        self.assertEqual(bench_docs.refresh(self.root), [])

    def test_a_subsection_belongs_to_its_section(self):
        self.results("### A subsection", "", TABLE)
        self.assertEqual(len(self.problems()), 1)

    def test_a_block_that_differs_from_its_file_fails(self):
        self.results(*block("docs/bench/x.md", GENERATED.replace("| x | 1 |", "| x | 2 |")))
        problems = self.problems()
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("the block differs from docs/bench/x.md", problems[0])

    def test_a_block_naming_a_missing_file_fails(self):
        self.results(*block("docs/bench/nothing.md", GENERATED))
        self.assertIn("does not exist", " ".join(self.problems()))

    def test_a_generated_file_without_its_command_fails(self):
        text = "".join(l + "\n" for l in GENERATED.splitlines() if "**Command:**" not in l)
        self.write("docs/bench/x.md", text)
        self.results(*block("docs/bench/x.md", text))
        problems = self.problems()
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("docs/bench/x.md: stamp lacks its line '- **Command:** `the exact command`'", problems[0])

    def test_a_generated_file_without_date_commit_or_machine_fails(self):
        for key in ("**Measured:**", "**Machine:**"):
            text = "".join(l + "\n" for l in GENERATED.splitlines() if key not in l)
            self.write("docs/bench/x.md", text)
            self.results(*block("docs/bench/x.md", text))
            self.assertEqual(len(self.problems()), 1, key)

    def test_a_stamp_without_a_commit_fails(self):
        text = GENERATED.replace("commit `5f479aa3c1d2` (working tree dirty)", "commit unknown (not a git checkout)")
        self.write("docs/bench/x.md", text)
        self.assertIn("Measured", " ".join(self.problems()))

    def test_a_listed_manual_exemption_passes_and_an_unlisted_one_fails(self):
        self.results("<!-- bench-table: manual: soak: runs for 30 minutes -->", TABLE, "<!-- end bench-table -->")
        self.assertEqual(self.problems(exemptions={"soak": "scripts/soak.sh"}), [])
        problems = self.problems(exemptions={})
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("manual table 'soak' is not a listed exemption", problems[0])

    def test_a_manual_block_needs_an_id_and_a_reason(self):
        self.results("<!-- bench-table: manual -->", TABLE, "<!-- end bench-table -->")
        self.assertIn("a manual block is written", " ".join(self.problems()))

    def test_unbalanced_markers_fail(self):
        self.results("<!-- bench-table: docs/bench/x.md -->", GENERATED)
        self.assertIn("has no '<!-- end bench-table -->'", " ".join(self.problems()))
        self.results("<!-- end bench-table -->")
        self.assertIn("without a block opened above it", " ".join(self.problems()))

    def test_the_checked_section_must_exist(self):
        self.write("docs/results.md", "# Measured results\n")
        self.assertIn("no section '## Benchmarks'", " ".join(self.problems()))


class RefreshTest(Fixture):
    def test_refresh_copies_each_file_into_its_block_and_keeps_the_prose(self):
        self.results("Before.", "", *block("docs/bench/x.md", "old"), "After.", "")
        self.assertEqual(bench_docs.refresh(self.root), [])
        text = self.read("docs/results.md")
        self.assertIn("Before.\n\n<!-- bench-table: docs/bench/x.md -->\n" + GENERATED + "<!-- end bench-table -->\n\nAfter.",
                      text)
        self.assertEqual(self.problems(), [])
        self.assertEqual(bench_docs.refresh(self.root), [])
        self.assertEqual(self.read("docs/results.md"), text, "a second refresh changes nothing")

    def test_a_missing_file_is_reported_and_the_other_blocks_still_refresh(self):
        self.results(*block("docs/bench/nothing.md", "kept"), *block("docs/bench/x.md", "old"))
        problems = bench_docs.refresh(self.root)
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("docs/bench/nothing.md does not exist", problems[0])
        text = self.read("docs/results.md")
        self.assertIn("<!-- bench-table: docs/bench/nothing.md -->\nkept\n", text)
        self.assertIn("<!-- bench-table: docs/bench/x.md -->\n" + GENERATED, text)

    def test_refresh_leaves_a_doc_with_broken_markers_alone(self):
        self.results("<!-- bench-table: docs/bench/x.md -->", "old")
        before = self.read("docs/results.md")
        self.assertNotEqual(bench_docs.refresh(self.root), [])
        self.assertEqual(self.read("docs/results.md"), before)

    def test_manual_blocks_are_left_as_written(self):
        self.results("<!-- bench-table: manual: soak: by hand -->", TABLE, "<!-- end bench-table -->")
        before = self.read("docs/results.md")
        self.assertEqual(bench_docs.refresh(self.root), [])
        self.assertEqual(self.read("docs/results.md"), before)


class StampTest(unittest.TestCase):
    def test_both_writers_write_the_same_lines(self):
        # The same text as tests/bench/pipeline/stamp_test.cpp expects of bench/pipeline/stamp.cpp.
        stamp = {"date": "2026-12-04 15:21 UTC", "commit": "5f479aa3c1d2", "dirty": True, "cpu": "Some CPU",
                 "cores": 2, "load": (2.634, 1.73, 1.0), "command": "build/bench/bench_x --benchmark_filter=y"}
        self.assertEqual(
            bench_docs.render_stamp(stamp, "a test"),
            "<!-- generated by a test: do not edit; rerun the command below (docs/bench.md says how) -->\n"
            "- **Measured:** 2026-12-04 15:21 UTC, commit `5f479aa3c1d2` (working tree dirty)\n"
            "- **Machine:** Some CPU, 2 cores, load average 2.63 / 1.73 / 1.00 (1, 5, 15 min) at the start\n"
            "- **Command:** `build/bench/bench_x --benchmark_filter=y`\n")
        self.assertEqual(bench_docs.stamp_problems(bench_docs.render_stamp(stamp, "a test")), [])

    def test_a_stamp_taken_here_passes_its_own_check(self):
        stamp = bench_docs.take_stamp(ROOT, ["build/bench/bench_x", "--benchmark_filter=a b"], {"K": "v"})
        text = bench_docs.render_stamp(stamp, "a test")
        self.assertIn("- **Command:** `K=v build/bench/bench_x '--benchmark_filter=a b'`", text)
        if stamp["commit"]:  # a source tree without git has no commit to stamp
            self.assertEqual(bench_docs.stamp_problems(text), [])


class RepositoryTest(unittest.TestCase):
    def test_the_documented_tables_are_generated_stamped_and_current(self):
        problems = bench_docs.check(ROOT)
        self.assertEqual(problems, [], "\n".join(problems))


if __name__ == "__main__":
    unittest.main()
