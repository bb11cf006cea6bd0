#include "runtime/eval.hpp"

#include "algo/metrics.hpp"
#include "common/json_text.hpp"
#include "common/sha256.hpp"
#include "env/feedback.hpp"
#include "policy/code_extract.hpp"
#include "policy/policy_model.hpp"
#include "policy/special_tokens.hpp"
#include "policy/tokenizer.hpp"
#include "runtime/evaluator.hpp"
#include "runtime/policy_io.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>

namespace leap::runtime {

namespace {

struct attempt {
  std::string task;
  std::vector<policy::turn_record> history;
  int solved_turn = 0;
  bool done = false;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::uint64_t task_seed(std::uint64_t base, const std::string& task, int turn, std::size_t k) {
  auto h = sha256_hex(task);
  return base * 1000003ull + std::stoull(h.substr(0, 12), nullptr, 16) + static_cast<std::uint64_t>(turn) * 7919ull + k;
}

} // namespace

result<eval_summary> evaluate_checkpoint(services& svc, const std::string& dir, bool show) {
  const auto& cfg = svc.cfg;
  auto t_start = std::chrono::steady_clock::now();
  auto tok = policy::tokenizer::load(dir + "/tokenizer.json");
  if (!tok)
    return make_error("checkpoint " + dir + ": " + tok.message());
  auto model = policy::policy_model::load(dir);
  if (!model)
    return make_error("checkpoint " + dir + ": " + model.message());
  policy::set_torch_threads(0);
  std::vector<std::string> names = cfg.eval.tasks;
  if (names.empty())
    for (auto& [n, t] : *svc.tasks)
      names.push_back(n);
  for (auto& n : names)
    if (!svc.tasks->count(n))
      return make_error("eval.tasks: unknown task '" + n + "'");
  const int G = cfg.eval.group_size, T = cfg.eval.max_turns;
  const int eos = tok->token_id(policy::special::eos);
  const auto max_len = model->config().max_seq_len;
  std::vector<attempt> attempts;
  eval_summary sum;
  for (auto& n : names)
    sum.per_task[n].solved_turn.assign(static_cast<std::size_t>(G), 0);
  evaluator ev(svc);
  // Debugging aid (no config key): LEAP_EVAL_DUMP=FILE appends one JSON line per sample with the
  // prompt text, the raw completion, the verdict and its feedback.
  std::ofstream dump;
  if (const char* d = std::getenv("LEAP_EVAL_DUMP"); d != nullptr && *d != '\0')
    dump.open(d, std::ios::app);
  for (int turn = 1; turn <= T; ++turn) {
    // 1. Generate: one group per task on turn 1, one sample per failed attempt afterwards.
    auto t_gen = std::chrono::steady_clock::now();
    struct pending {
      std::size_t attempt;
      std::string completion;
    };
    std::vector<pending> batch;
    auto generate = [&](const std::vector<int>& prompt, int group, std::uint64_t seed)
      -> result<std::vector<std::string>> {
      policy::group_sampling gs;
      gs.group_size = group;
      gs.temperature = cfg.eval.temperature;
      gs.top_p = cfg.eval.top_p;
      gs.max_new_tokens = std::min<long long>(cfg.eval.max_new_tokens,
                                              max_len - static_cast<long long>(prompt.size()));
      gs.seed = seed;
      std::vector<std::string> texts;
      if (gs.max_new_tokens <= 0) {
        texts.assign(static_cast<std::size_t>(group), "");
        return texts;
      }
      auto s = model->sample(prompt, gs);
      if (!s)
        return s.err();
      for (auto& x : *s) {
        auto ids = x.tokens;
        if (!ids.empty() && ids.back() == eos)
          ids.pop_back();
        sum.generated_tokens += static_cast<long long>(x.tokens.size());
        texts.push_back(tok->decode(ids));
      }
      return texts;
    };
    if (turn == 1) {
      for (auto& n : names) {
        auto prompt = tok->encode(policy::render_prompt(view_of(svc.tasks->at(n)), {}), true);
        auto texts = generate(prompt, G, task_seed(cfg.eval.seed, n, turn, 0));
        if (!texts)
          return texts.err();
        for (auto& t : *texts) {
          attempts.push_back({n, {}, 0, false});
          batch.push_back({attempts.size() - 1, t});
        }
      }
    } else {
      // Every failed attempt gets its own prompt (history + feedback); prompts of similar length
      // are decoded together as one left-padded batch.
      std::vector<std::pair<std::size_t, std::vector<int>>> todo;
      for (std::size_t i = 0; i < attempts.size(); ++i) {
        auto& a = attempts[i];
        if (a.done)
          continue;
        todo.emplace_back(i, tok->encode(policy::render_prompt(view_of(svc.tasks->at(a.task)), a.history), true));
      }
      std::stable_sort(todo.begin(), todo.end(),
                       [](auto& x, auto& y) { return x.second.size() < y.second.size(); });
      const std::size_t chunk = 16;
      for (std::size_t c = 0; c < todo.size(); c += chunk) {
        std::vector<std::vector<int>> prompts;
        std::vector<std::size_t> which;
        for (std::size_t k = c; k < std::min(todo.size(), c + chunk); ++k) {
          if (static_cast<long long>(todo[k].second.size()) + 16 > max_len) {
            batch.push_back({todo[k].first, ""}); // no room left to answer: no code
            continue;
          }
          prompts.push_back(todo[k].second);
          which.push_back(todo[k].first);
        }
        if (prompts.empty())
          continue;
        policy::group_sampling gs;
        gs.temperature = cfg.eval.temperature;
        gs.top_p = cfg.eval.top_p;
        gs.max_new_tokens = std::min<long long>(cfg.eval.max_new_tokens,
                                                max_len - static_cast<long long>(prompts.back().size()));
        gs.seed = task_seed(cfg.eval.seed, "turn", turn, c);
        auto s = model->sample_each(prompts, gs);
        if (!s)
          return s.err();
        for (std::size_t k = 0; k < s->size(); ++k) {
          auto ids = (*s)[k].tokens;
          sum.generated_tokens += static_cast<long long>(ids.size());
          if (!ids.empty() && ids.back() == eos)
            ids.pop_back();
          batch.push_back({which[k], tok->decode(ids)});
        }
      }
    }
    sum.samples += static_cast<long long>(batch.size());
    double gen_s = seconds_since(t_gen);
    sum.generation_seconds += gen_s;
    if (batch.empty())
      break;
    // 2. Verify through the real environment (compiler pool -> executor pool).
    auto t_ver = std::chrono::steady_clock::now();
    std::vector<check_item> items;
    std::vector<std::size_t> item_of(batch.size(), SIZE_MAX);
    std::vector<policy::extracted> code(batch.size());
    for (std::size_t b = 0; b < batch.size(); ++b) {
      code[b] = policy::extract_code(batch[b].completion);
      if (code[b].ok) {
        item_of[b] = items.size();
        items.push_back({attempts[batch[b].attempt].task, code[b].code, false, false});
      }
    }
    auto verdicts = ev.evaluate(items);
    int correct = 0;
    for (std::size_t b = 0; b < batch.size(); ++b) {
      auto& a = attempts[batch[b].attempt];
      std::string status, feedback;
      if (item_of[b] == SIZE_MAX) {
        ++sum.no_code;
        status = "rejected";
        feedback = "rejected: " + code[b].reason;
      } else {
        auto& v = verdicts[item_of[b]];
        if (!v)
          return make_error("verifying a sample of '" + a.task + "': " + v.message());
        status = env::to_string(v->v.st);
        feedback = v->v.feedback;
        sum.emulation_unsupported += v->v.emulation_unsupported;
      }
      if (dump.is_open())
        dump << dump_lossy(nlohmann::json{
                  {"task", a.task}, {"turn", turn}, {"attempt", batch[b].attempt},
                  {"prompt", policy::render_prompt(view_of(svc.tasks->at(a.task)), a.history)},
                  {"completion", batch[b].completion}, {"status", status}, {"feedback", feedback}})
             << "\n";
      if (turn == 1)
        sum.per_task[a.task].turn1_status[status]++;
      if (status == "correct") {
        a.solved_turn = turn;
        a.done = true;
        ++correct;
      } else {
        a.history.push_back({code[b].ok ? code[b].code : batch[b].completion, feedback});
      }
    }
    double ver_s = seconds_since(t_ver);
    sum.verify_seconds += ver_s;
    if (show)
      std::fprintf(stderr, "eval turn %d: %zu samples generated in %.1f s, verified in %.1f s: %d correct\n",
                   turn, batch.size(), gen_s, ver_s, correct);
  }
  // 3. Metrics.
  std::map<std::string, std::size_t> seen;
  for (auto& a : attempts)
    sum.per_task[a.task].solved_turn[seen[a.task]++] = a.solved_turn;
  std::vector<algo::group_record> groups;
  for (auto& [n, r] : sum.per_task)
    groups.push_back({r.solved_turn, T > 1});
  sum.pass_at_1 = algo::acc_at_k(groups, 1);
  for (int k = 1; k <= std::max(T, 3); ++k)
    sum.acc_at.push_back(algo::acc_at_k(groups, std::min(k, T)));
  sum.turns_per_pass = algo::turns_per_pass(groups);
  sum.seconds = seconds_since(t_start);
  return sum;
}

int cmd_eval(services& svc, const std::string& dir, bool json) {
  auto r = evaluate_checkpoint(svc, dir, true);
  if (!r) {
    std::cerr << "leap: eval: " << r.message() << "\n";
    return 1;
  }
  const int T = svc.cfg.eval.max_turns;
  std::printf("%-18s %8s", "task", "pass@1");
  for (int k = 2; k <= T; ++k)
    std::printf("   acc@%d", k);
  std::printf("   turn-1 verdicts\n");
  nlohmann::json per_task = nlohmann::json::object();
  for (auto& [n, t] : r->per_task) {
    auto g = static_cast<double>(t.solved_turn.size());
    std::printf("%-18s %8.3f", n.c_str(),
                std::count(t.solved_turn.begin(), t.solved_turn.end(), 1) / g);
    nlohmann::json acc = nlohmann::json::array();
    for (int k = 1; k <= T; ++k) {
      auto c = std::count_if(t.solved_turn.begin(), t.solved_turn.end(),
                             [k](int s) { return s > 0 && s <= k; });
      acc.push_back(c / g);
      if (k >= 2)
        std::printf(" %7.3f", c / g);
    }
    std::string verdicts;
    for (auto& [s, c] : t.turn1_status)
      verdicts += (verdicts.empty() ? "" : ", ") + s + " " + std::to_string(c);
    std::printf("   %s\n", verdicts.c_str());
    per_task[n] = {{"pass_at_1", acc[0]}, {"acc", acc}, {"turn1_verdicts", t.turn1_status}};
  }
  std::printf("pass@1 %.3f   Acc@1 %.3f   Acc@2 %.3f   Acc@3 %.3f   turns/pass %.2f\n",
              r->pass_at_1, r->acc_at[0], r->acc_at[1], r->acc_at[2], r->turns_per_pass);
  std::printf("%lld samples, %lld tokens generated in %.1f s, verified in %.1f s; %lld without "
              "code, %lld emulation-unsupported; total %.1f s\n",
              r->samples, r->generated_tokens, r->generation_seconds, r->verify_seconds,
              r->no_code, r->emulation_unsupported, r->seconds);
  if (json)
    std::cout << dump_lossy(nlohmann::json{{"pass_at_1", r->pass_at_1}, {"acc_at_1", r->acc_at[0]},
                                {"acc_at_2", r->acc_at[1]}, {"acc_at_3", r->acc_at[2]},
                                {"turns_per_pass", r->turns_per_pass}, {"per_task", per_task},
                                {"samples", r->samples}, {"generated_tokens", r->generated_tokens},
                                {"generation_seconds", r->generation_seconds},
                                {"verify_seconds", r->verify_seconds}, {"seconds", r->seconds},
                                {"max_turns", T}, {"group_size", svc.cfg.eval.group_size}})
              << "\n";
  return 0;
}

} // namespace leap::runtime
