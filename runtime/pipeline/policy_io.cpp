#include "runtime/pipeline/policy_io.hpp"

#include "common/fs.hpp"
#include "common/strings.hpp"
#include "policy/text/hf_files.hpp"
#include "policy/text/code_edit.hpp"
#include "policy/text/special_tokens.hpp"

#include <nlohmann/json.hpp>

#include <map>

namespace leap::runtime {

policy::task_view view_of(const env::task_spec& t) {
  return {t.title.empty() ? t.name : t.title, t.description, t.signature, t.allowed_libraries};
}

std::string task_prompt(const env::task_spec& t, const std::vector<std::string>& codes,
                        const std::vector<std::string>& feedbacks, policy::chat_format format) {
  std::vector<policy::turn_record> history;
  for (std::size_t i = 0; i < codes.size(); ++i)
    history.push_back({codes[i], feedbacks[i]});
  return policy::render_prompt(view_of(t), history, format);
}

std::vector<sft_text> self_repair_texts(const std::vector<failed_turn>& failures,
                                        const std::vector<sft_text>& texts,
                                        const std::map<std::string, env::task_spec>& tasks) {
  std::map<std::string, const sft_text*> first_solution;
  for (const auto& t : texts)
    if (!t.repair && t.alternative == 0)
      first_solution.emplace(t.task, &t);
  std::vector<sft_text> out;
  for (const auto& f : failures) {
    auto target = first_solution.find(f.task);
    auto spec = tasks.find(f.task);
    if (target == first_solution.end() || spec == tasks.end())
      continue;
    sft_text t;
    t.task = f.task;
    t.prompt = task_prompt(spec->second, {f.code}, {f.feedback}, policy::chat_format::leap);
    t.completion = target->second->completion;
    t.repair = true;
    out.push_back(std::move(t));
  }
  return out;
}

std::optional<policy::chat_format> named_chat_format(config::chat_format_choice choice) {
  switch (choice) {
    case config::chat_format_choice::leap: return policy::chat_format::leap;
    case config::chat_format_choice::chatml: return policy::chat_format::chatml;
    case config::chat_format_choice::llama3: return policy::chat_format::llama3;
    case config::chat_format_choice::auto_detect: break;
  }
  return std::nullopt;
}

result<policy::chat_format> chat_format_for(config::chat_format_choice choice, const std::string& dir,
                                            const policy::tokenizer& tok) {
  policy::chat_format f = policy::chat_format::leap;
  if (auto named = named_chat_format(choice)) {
    f = *named;
  } else {
    auto tc = policy::load_tokenizer_config(dir);
    if (!tc)
      return tc.err();
    if (!tc->chat_template.empty()) {
      auto detected = policy::chat_format_of_template(tc->chat_template);
      if (!detected)
        return make_error(dir + "/tokenizer_config.json: its chat_template is none of the formats "
                          "leap writes (leap, chatml, llama3); set policy.chat_format to the one "
                          "the model was trained on");
      f = *detected;
    }
  }
  std::vector<std::string> markers;
  switch (f) {
    case policy::chat_format::leap: break;  // leap's trainer always adds them (special_tokens.hpp)
    case policy::chat_format::chatml: markers = {"<|im_start|>", "<|im_end|>"}; break;
    case policy::chat_format::llama3:
      markers = {"<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"};
      break;
  }
  for (const auto& m : markers)
    if (tok.token_id(m) < 0)
      return make_error(std::string("policy.chat_format = ") + policy::chat_format_name(f) + ": the tokenizer of "
                        + dir + " has no special token " + m);
  return f;
}

result<std::vector<sft_text>> load_sft_texts(const std::string& path,
                                             const std::map<std::string, env::task_spec>& tasks,
                                             config::repair_format repairs) {
  auto text = read_file(path);
  if (!text)
    return text.err();
  std::vector<sft_text> out;
  // task -> target solution -> its rank in the corpus (0 = the task's first, simplest one); a
  // task's solutions come before its repair dialogues in corpus.jsonl.
  std::map<std::string, std::map<std::string, int>> rank;
  int line_no = 0;
  for (auto& line : split_lines(*text)) {
    ++line_no;
    if (trim(line).empty())
      continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const std::exception& e) {
      return make_error(path + ":" + std::to_string(line_no) + ": not JSON: " + e.what());
    }
    auto task = j.value("task", "");
    auto it = tasks.find(task);
    if (it == tasks.end())
      continue; // a task no longer in the suite
    if (it->second.split != env::task_split::train)
      return make_error(path + ":" + std::to_string(line_no) + ": task '" + task +
                        "' is in the eval split (held out); SFT never trains on it");
    auto kind = j.value("kind", "");
    auto view = view_of(it->second);
    if (kind == "solution" && j.value("target", false)) {
      auto& r = rank[task];
      int alt = static_cast<int>(r.size());
      r.emplace(j.value("variant", ""), alt);
      out.push_back({task, policy::render_prompt(view, {}),
                     policy::render_completion(j.value("code", "")), false, alt});
    } else if (kind == "repair") {
      policy::turn_record prev{j.value("buggy_code", ""), j.value("feedback", "")};
      auto fixed = rank[task].find(j.value("fixed_variant", ""));
      int alt = fixed == rank[task].end() ? 1 : fixed->second;
      out.push_back({task, policy::render_prompt(view, {prev}),
                     repairs == config::repair_format::edit
                       ? policy::render_edit(prev.code, j.value("fixed_code", ""))
                       : policy::render_completion(j.value("fixed_code", "")),
                     true, alt});
    }
  }
  if (out.empty())
    return make_error(path + ": no target solutions or repair dialogues");
  return out;
}

encoded_pair encode_pair(const policy::tokenizer& tok, const sft_text& t) {
  encoded_pair p;
  p.prompt = tok.encode(t.prompt, true);
  p.completion = tok.encode(t.completion, false);
  p.completion.push_back(tok.token_id(policy::special::eos));
  return p;
}

} // namespace leap::runtime
