#include "algo/advantages.hpp"

#include <algorithm>
#include <cmath>

namespace leap::algo {

const char* to_string(estimator e) {
  switch (e) {
    case estimator::rank: return "rank";
    case estimator::grpo: return "grpo";
    case estimator::drgrpo: return "drgrpo";
    case estimator::trloo: return "trloo";
    case estimator::discounted: return "discounted";
  }
  return "?";
}

bool parse_estimator(const std::string& text, estimator& out) {
  for (auto e : {estimator::rank, estimator::grpo, estimator::drgrpo, estimator::trloo,
                 estimator::discounted})
    if (text == to_string(e)) {
      out = e;
      return true;
    }
  return false;
}

double trajectory_reward(const trajectory& t) {
  double best = 0;
  bool any = false;
  for (double r : t.turn_rewards) {
    best = any ? std::max(best, r) : r;
    any = true;
  }
  return best;
}

namespace {

std::vector<std::vector<double>> broadcast(const std::vector<trajectory>& g,
                                           const std::vector<double>& per_traj) {
  std::vector<std::vector<double>> out(g.size());
  for (std::size_t i = 0; i < g.size(); ++i)
    out[i].assign(g[i].turn_rewards.size(), per_traj[i]);
  return out;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v)
    s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

// Population standard deviation.
double stddev(const std::vector<double>& v, double m) {
  double s = 0;
  for (double x : v)
    s += (x - m) * (x - m);
  return v.empty() ? 0 : std::sqrt(s / static_cast<double>(v.size()));
}

} // namespace

std::vector<std::vector<double>> advantages(const std::vector<trajectory>& g,
                                            const estimator_config& cfg) {
  switch (cfg.kind) {
    case estimator::rank: {
      std::vector<trajectory_outcome> o;
      for (auto& t : g)
        o.push_back(t.outcome);
      return broadcast(g, play(o, cfg.tournament).rewards);
    }
    case estimator::grpo:
    case estimator::drgrpo: {
      std::vector<double> r;
      for (auto& t : g)
        r.push_back(trajectory_reward(t));
      double m = mean(r);
      double sd = stddev(r, m);
      std::vector<double> a;
      for (double x : r)
        a.push_back(cfg.kind == estimator::grpo ? (x - m) / (sd + cfg.eps) : x - m);
      return broadcast(g, a);
    }
    case estimator::trloo: {
      // Reward-to-go per turn, then a leave-one-out baseline over the other trajectories of the
      // group that reached the same turn. A turn no other trajectory reached gets advantage 0.
      std::vector<std::vector<double>> togo(g.size());
      std::size_t max_turns = 0;
      for (std::size_t i = 0; i < g.size(); ++i) {
        auto& r = g[i].turn_rewards;
        togo[i].assign(r.size(), 0);
        double acc = 0;
        for (std::size_t k = r.size(); k-- > 0;) {
          acc += r[k];
          togo[i][k] = acc;
        }
        max_turns = std::max(max_turns, r.size());
      }
      std::vector<std::vector<double>> out(g.size());
      for (std::size_t i = 0; i < g.size(); ++i)
        out[i].assign(togo[i].size(), 0);
      for (std::size_t k = 0; k < max_turns; ++k) {
        double sum = 0;
        int n = 0;
        for (std::size_t i = 0; i < g.size(); ++i)
          if (k < togo[i].size()) {
            sum += togo[i][k];
            ++n;
          }
        for (std::size_t i = 0; i < g.size(); ++i)
          if (k < togo[i].size() && n > 1)
            out[i][k] = togo[i][k] - (sum - togo[i][k]) / (n - 1);
      }
      return out;
    }
    case estimator::discounted: {
      std::vector<std::vector<double>> ret(g.size());
      std::vector<double> all;
      for (std::size_t i = 0; i < g.size(); ++i) {
        auto& r = g[i].turn_rewards;
        ret[i].assign(r.size(), 0);
        double acc = 0;
        for (std::size_t k = r.size(); k-- > 0;) {
          acc = r[k] + cfg.gamma * acc;
          ret[i][k] = acc;
        }
        all.insert(all.end(), ret[i].begin(), ret[i].end());
      }
      double m = mean(all), sd = stddev(all, m);
      for (auto& row : ret)
        for (auto& x : row)
          x = (x - m) / (sd + cfg.eps);
      return ret;
    }
  }
  return {};
}

} // namespace leap::algo
