#include "bench/pipeline/command.hpp"

#include "bench/pipeline/report.hpp"
#include "bench/pipeline/report_markdown.hpp"
#include "bench/pipeline/run_mode.hpp"
#include "bench/pipeline/scenario.hpp"
#include "bench/pipeline/timeline_svg.hpp"
#include "common/fs.hpp"
#include "common/strings.hpp"
#include "runtime/commands/table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

namespace leap::bench {

namespace {

namespace fs = std::filesystem;

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    auto c = s.find(',', start);
    out.push_back(s.substr(start, c == std::string::npos ? std::string::npos : c - start));
    if (c == std::string::npos)
      return out;
    start = c + 1;
  }
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string model_text(const stage_model& m, const char* unit) {
  if (m.real)
    return m.name;
  if (m.dist.k == latency_dist::kind::lognormal)
    return "lognormal(mean " + num(m.dist.mean) + " s, sigma " + num(m.dist.sigma) + ")" + unit;
  return "fixed " + num(m.dist.mean) + " s" + unit;
}

std::string shape_of(const scenario& sc) {
  const auto& t = sc.cfg.train;
  std::string dcp = t.dcp ? "expand when " + num(t.dcp_t_min) + " <= N_fail <= " + num(t.dcp_t_max)
                              + (t.dcp_fractional ? " x G" : "")
                          : "off";
  std::string s = "B=" + std::to_string(t.batch_groups) + " G=" + std::to_string(t.group_size)
                  + " turns=" + std::to_string(t.max_turns) + ", DCP " + dcp + ", "
                  + std::to_string(t.steps) + " steps, staleness " + std::to_string(t.max_staleness)
                  + "; generate " + std::to_string(t.generators) + " x "
                  + model_text(sc.generate, "/attempt") + ", compile "
                  + std::to_string(sc.cfg.compiler.workers) + " x " + model_text(sc.compile, "")
                  + (sc.compile.real ? " (" + sc.compile_source + " sources)" : "") + ", execute "
                  + std::to_string(sc.cfg.executor.workers) + " x " + model_text(sc.execute, "")
                  + ", learner " + num(sc.learner_seconds) + " s/step";
  if (!sc.any_real())
    s += "; time scale " + num(sc.time_scale) + " (figures in scenario seconds)";
  return s;
}

nominal_service nominal_of(const scenario& sc) {
  nominal_service n;
  n.generate = sc.generate.real ? -1 : sc.generate.dist.mean;
  n.compile = sc.compile.real ? -1 : sc.compile.dist.mean;
  n.execute = sc.execute.real ? -1 : sc.execute.dist.mean;
  n.learner_step = sc.learner_seconds;
  return n;
}

bound_figures bound_of(const scenario& sc, const mode_figures& ref) {
  return analytic_bound(nominal_of(sc), ref, static_cast<std::uint32_t>(sc.cfg.train.generators),
                               static_cast<std::uint32_t>(sc.cfg.compiler.workers),
                               static_cast<std::uint32_t>(sc.cfg.executor.workers),
                               sc.any_real() ? usable_cores() : 0u);
}

result<std::vector<std::pair<std::string, std::vector<double>>>> parse_sweep(
  const std::vector<std::string>& specs) {
  std::vector<std::pair<std::string, std::vector<double>>> axes;
  for (auto& spec : specs) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      return make_error("--sweep " + spec + ": expected AXIS=v1,v2,... (axes: "
                        + join(sweep_axes(), ", ") + ")");
    std::string axis = spec.substr(0, eq);
    if (std::find(sweep_axes().begin(), sweep_axes().end(), axis)
        == sweep_axes().end())
      return make_error("--sweep " + spec + ": unknown axis '" + axis + "' (axes: "
                        + join(sweep_axes(), ", ") + ")");
    std::vector<double> vals;
    for (auto& v : split_commas(spec.substr(eq + 1))) {
      try {
        std::size_t used = 0;
        vals.push_back(std::stod(std::string(trim(v)), &used));
      } catch (const std::exception&) {
        return make_error("--sweep " + spec + ": '" + std::string(v) + "' is not a number");
      }
    }
    if (vals.empty())
      return make_error("--sweep " + spec + ": no values");
    axes.emplace_back(axis, vals);
  }
  return axes;
}

std::string busiest_of(const mode_figures& m) {
  std::string best;
  double u = -1;
  for (auto& s : m.stages)
    if (s.utilisation > u) {
      u = s.utilisation;
      best = s.stage;
    }
  if (m.learner_busy > u)
    best = "learner";
  return best;
}

// DIR/<scenario>.md: the table the docs include (docs/bench.md).
void write_markdown(const std::string& path, const std::string& text) {
  if (auto r = write_file_atomic(path, text); !r)
    std::cerr << "leap: " << r.message() << "\n";
  else
    std::cout << "Markdown: " << path << "\n";
}

int run_sweep(const scenario& base, const bench_args& args, const std::string& out_dir,
              const run_stamp& stamp) {
  auto axes = parse_sweep(args.sweep);
  if (!axes) {
    std::cerr << "leap: " << axes.message() << "\n";
    return 2;
  }
  std::vector<sweep_point> pts;
  std::vector<std::size_t> idx(axes->size(), 0);
  for (;;) {
    scenario sc = base;
    sweep_point p;
    for (std::size_t a = 0; a < axes->size(); ++a) {
      double v = (*axes)[a].second[idx[a]];
      if (auto r = apply_axis(sc, (*axes)[a].first, v); !r) {
        std::cerr << "leap: --sweep: " << r.message() << "\n";
        return 2;
      }
      p.axes.emplace_back((*axes)[a].first, v);
    }
    if (auto r = validate(sc); !r) {
      std::cerr << "leap: --sweep: " << r.message() << "\n";
      return 2;
    }
    std::string label;
    for (auto& [k, v] : p.axes)
      label += k + "=" + num(v) + " ";
    std::fprintf(stderr, "sweep point %s\n", label.c_str());
    auto run = run_scenario_mode(sc, bench_mode::async, out_dir, false);
    if (!run || run->failure) {
      std::cerr << "leap: sweep point " << label << "failed: "
                << (run ? *run->failure : run.message()) << "\n";
      return 1;
    }
    p.async = figures_of(*run);
    p.bound = bound_of(sc, p.async);
    p.busiest = busiest_of(p.async);
    pts.push_back(std::move(p));
    std::size_t a = axes->size();
    while (a > 0) {
      --a;
      if (++idx[a] < (*axes)[a].second.size())
        break;
      idx[a] = 0;
      if (a == 0) {
        a = axes->size() + 1;
        break;
      }
    }
    if (a == axes->size() + 1)
      break;
  }
  std::cout << "sweep of scenario " << base.name << " (async mode): " << shape_of(base) << "\n\n"
            << render_sweep_table(pts);
  auto csv = (fs::path(out_dir) / (base.name + "-sweep.csv")).string();
  if (auto r = write_file_atomic(csv, render_sweep_csv(pts)); !r)
    std::cerr << "leap: " << r.message() << "\n";
  else
    std::cout << "\nCSV: " << csv << "\n";
  write_markdown((fs::path(out_dir) / (base.name + "-sweep.md")).string(),
                 render_sweep_markdown(base.name, shape_of(base), pts, stamp));
  if (args.json)
    std::cout << render_sweep_json(pts) << std::endl;
  return 0;
}

} // namespace

std::string scenario_shape(const scenario& sc) { return shape_of(sc); }

result<scenario> load_scenario_with(const std::string& path, const std::vector<std::string>& sets) {
  auto sc = load_scenario(path);
  if (!sc)
    return sc.err();
  for (auto& s : sets) {
    auto r = starts_with(s, "bench.") ? apply_bench_override(*sc, s)
                                      : config::apply_override(sc->cfg, s, &sc->origins);
    if (!r)
      return r.err();
  }
  if (auto r = validate(*sc); !r)
    return make_error(path + ": " + r.message());
  return sc;
}

int cmd_bench(const bench_args& args) {
  if (args.scenario_path.empty()) {
    std::cerr << "leap: bench needs --config configs/bench/<scenario>.toml\n";
    return 2;
  }
  auto sc_r = load_scenario_with(args.scenario_path, args.sets);
  if (!sc_r) {
    std::cerr << "leap: " << sc_r.message() << "\n";
    return 2;
  }
  auto sc = std::move(*sc_r);
  const auto stamp = take_stamp(); // the load average before this run adds its own
  std::string out_dir = args.out_dir.empty() ? "runs/bench/" + sc.name : args.out_dir;
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) {
    std::cerr << "leap: cannot create " << out_dir << ": " << ec.message() << "\n";
    return 1;
  }
  if (!sc.any_real() && (!sc.cfg.cluster.nodes.empty() || !sc.cfg.cluster.listen.empty())) {
    std::cerr << "leap: " << sc.path << ": cluster.nodes and cluster.listen take a real-stage "
              << "scenario's compile and execute (bench.compile.model = \"nvcc\"); latency-model "
              << "stages run on the `leap bench node` processes of bench.nodes\n";
    return 2;
  }
  if (!args.sweep.empty())
    return run_sweep(sc, args, out_dir, stamp);
  if (!sc.nodes.empty())
    return sc.any_real() ? run_real_cluster_bench(sc, args, out_dir, stamp)
                         : run_cluster_bench(sc, args, out_dir, stamp);

  std::fprintf(stderr, "leap bench %s: %s\n", sc.name.c_str(), shape_of(sc).c_str());
  comparison cmp;
  cmp.scenario = sc.name;
  cmp.shape = shape_of(sc);
  std::vector<mode_run> runs;
  for (auto mode : {bench_mode::async, bench_mode::sync, bench_mode::async_no_dcp,
                    turn1_mode_of(sc)}) {
    auto r = run_scenario_mode(sc, mode, out_dir, true);
    if (!r) {
      std::cerr << "leap: bench " << to_string(mode) << ": " << r.message() << "\n";
      return 1;
    }
    if (r->failure) {
      std::cerr << "leap: bench " << to_string(mode) << " did not complete: " << *r->failure << "\n";
      return 1;
    }
    cmp.modes.push_back(figures_of(*r));
    runs.push_back(std::move(*r));
  }
  cmp.bound = bound_of(sc, cmp.modes[0]);
  derive(cmp);
  std::cout << render_table(cmp);
  auto csv = (fs::path(out_dir) / (sc.name + ".csv")).string();
  if (auto r = write_file_atomic(csv, render_csv(cmp)); !r)
    std::cerr << "leap: " << r.message() << "\n";
  else
    std::cout << "CSV: " << csv << "\n";
  write_markdown((fs::path(out_dir) / (sc.name + ".md")).string(), render_markdown(cmp, stamp));
  for (auto& run : runs) {
    double t0, t1;
    int step;
    if (!step_window(run, sc.timeline_step, t0, t1, step))
      continue;
    auto path = (fs::path(out_dir) / (sc.name + "-" + run.mode + "-timeline.svg")).string();
    auto title = sc.name + ": " + run.mode + ", step " + std::to_string(step);
    if (auto r = write_file_atomic(path, render_timeline_svg(run, t0, t1, title)); !r)
      std::cerr << "leap: " << r.message() << "\n";
    else
      std::cout << "timeline: " << path << "\n";
  }
  if (args.json)
    std::cout << render_json(cmp) << std::endl;
  return 0;
}

namespace {

int run_bench_command(const runtime::command_context& ctx) {
  const auto& a = ctx.args;
  bench_args b;
  b.scenario_path = a.config_file;
  b.sets = a.sets;
  b.json = a.has("--json");
  if (auto o = a.opt("--out"))
    b.out_dir = *o;
  if (auto it = a.opts.find("--sweep"); it != a.opts.end())
    b.sweep = it->second;
  for (std::size_t i = ctx.word_count; i < a.words.size(); ++i) {
    if (a.words[i].find('=') == std::string::npos || b.sweep.empty())
      return runtime::usage_error("bench: unexpected argument '" + a.words[i] + "'");
    b.sweep.push_back(a.words[i]); // --sweep a=1,2 b=3,4
  }
  return cmd_bench(b);
}

// `leap bench` joins the command table (the scenario file has a [bench] section the ordinary
// config does not know: the command reads its own configuration).
const runtime::command_registrar bench_verb{runtime::command{
  {"bench"},
  "--config configs/bench/S.toml [--json] [--out DIR] [--sweep AXIS=v1,v2 ...]",
  "pipeline throughput: async vs sync vs DCP off vs the\nother turn-1 straggler policy, on the "
  "real actors with\nlatency models or real stages; table, CSV, SVG\ntimelines; --sweep: async "
  "over a grid",
  runtime::command::needs::nothing, false, true, run_bench_command}};

} // namespace

} // namespace leap::bench
