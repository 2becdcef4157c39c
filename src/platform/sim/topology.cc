#include "platform/sim/topology.h"

#include <toml++/toml.h>
#include <cmath>
#include <set>
#include <string>
#include <string_view>

namespace abyss::platform::sim {

namespace {

// Reads a table's keys into fields, refusing a key the format does not have,
// a value of the wrong type, and a number that is not finite or below its
// least value.
class Reader final {
 public:
  Reader(const toml::table* t, std::string where) : t_(t), where_(std::move(where)) {}

  bool present() const { return t_ != nullptr; }

  void number(std::string_view key, double& out, double least = 0) {
    seen_.insert(std::string(key));
    if (t_ == nullptr || !error_.empty()) return;
    const toml::node* n = t_->get(key);
    if (n == nullptr) return;
    const auto v = n->value<double>();
    if (!v || !std::isfinite(*v) || *v < least) {
      fail(key, "a finite number of at least " + trim(least));
      return;
    }
    out = *v;
  }
  void count(std::string_view key, uint64_t& out, uint64_t least = 0) {
    double v = static_cast<double>(out);
    number(key, v, static_cast<double>(least));
    if (error_.empty()) {
      if (v != std::floor(v) || v > 1e15) {
        fail(key, "a whole number");
        return;
      }
      out = static_cast<uint64_t>(v);
    }
  }
  void count(std::string_view key, uint32_t& out, uint32_t least = 0) {
    uint64_t v = out;
    count(key, v, least);
    if (error_.empty() && v > 0xffffffffu) fail(key, "a 32-bit count");
    if (error_.empty()) out = static_cast<uint32_t>(v);
  }
  void text(std::string_view key, std::string& out) {
    seen_.insert(std::string(key));
    if (t_ == nullptr || !error_.empty()) return;
    const toml::node* n = t_->get(key);
    if (n == nullptr) return;
    const auto v = n->value<std::string>();
    if (!v || v->empty()) {
      fail(key, "a non-empty string");
      return;
    }
    out = *v;
  }
  void numbers(std::string_view key, std::vector<double>& out) {
    seen_.insert(std::string(key));
    if (t_ == nullptr || !error_.empty()) return;
    const toml::node* n = t_->get(key);
    if (n == nullptr) return;
    const toml::array* a = n->as_array();
    if (a == nullptr || a->empty()) {
      fail(key, "a non-empty array of numbers");
      return;
    }
    out.clear();
    for (const auto& e : *a) {
      const auto v = e.value<double>();
      if (!v || !std::isfinite(*v) || *v <= 0) {
        fail(key, "an array of positive numbers");
        return;
      }
      out.push_back(*v);
    }
  }
  void nested(std::string_view key) { seen_.insert(std::string(key)); }

  // Answers the first error, or an unknown key.
  std::string finish() {
    if (error_.empty() && t_ != nullptr) {
      for (const auto& [k, v] : *t_) {
        if (!seen_.contains(std::string(k.str()))) {
          error_ = where_ + "has no key '" + std::string(k.str()) + "'";
          break;
        }
      }
    }
    return error_;
  }

 private:
  static std::string trim(double v) {
    std::string s = std::to_string(v);
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
  void fail(std::string_view key, const std::string& want) {
    if (error_.empty()) error_ = where_ + "'" + std::string(key) + "' must be " + want;
  }

  const toml::table* t_;
  std::string where_;
  std::set<std::string> seen_;
  std::string error_;
};

std::string read_level(const toml::table* t, const std::string& where, CacheLevel& out) {
  Reader r(t, where);
  r.count("bytes", out.bytes, 64);
  r.count("ways", out.ways, 1);
  r.number("latency_cycles", out.latency_cycles);
  return r.finish();
}

std::string load(const std::string& path, Topology& out, bool nested);

// The directory of a topology file's path, with its slash ("" for a bare name).
std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

std::string load(const std::string& path, Topology& out, bool nested) {
  toml::table doc;
  try {
    doc = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    return "topology " + path + ": line " + std::to_string(where.line) + ": " + std::string(e.description());
  }
  Topology t;
  t.source = path;
  const std::string at = "topology " + path + ": ";
  std::string layout;
  Reader top(&doc, at);
  top.text("name", t.name);
  top.text("layout", layout);
  top.number("ghz", t.ghz, 0.001);
  top.number("line_transfer_cycles", t.line_transfer_cycles);
  top.nested("private");
  top.nested("shared");
  top.nested("mesh");
  top.nested("numa");
  top.nested("compute");
  if (auto err = top.finish(); !err.empty()) return err;
  if (t.name.empty()) return at + "needs a 'name'";
  if (layout == "mesh") {
    t.layout = Layout::Mesh;
  } else if (layout == "numa") {
    t.layout = Layout::Numa;
  } else {
    return at + "'layout' must be mesh or numa";
  }

  if (const toml::node* p = doc.get("private")) {
    const toml::array* levels = p->as_array();
    if (levels == nullptr) return at + "'private' must be an array of tables ([[private]])";
    for (std::size_t i = 0; i < levels->size(); i++) {
      const toml::table* lt = (*levels)[i].as_table();
      if (lt == nullptr) return at + "'private' must be an array of tables ([[private]])";
      CacheLevel level;
      if (auto err = read_level(lt, at + "[[private]] " + std::to_string(i + 1) + ": ", level); !err.empty()) {
        return err;
      }
      t.private_levels.push_back(level);
    }
  }
  if (t.private_levels.empty()) return at + "needs at least one [[private]] cache level";
  if (const toml::node* s = doc.get("shared")) {
    if (s->as_table() == nullptr) return at + "'shared' must be a table";
    if (auto err = read_level(s->as_table(), at + "[shared]: ", t.shared); !err.empty()) return err;
  }

  Reader mesh(doc["mesh"].as_table(), at + "[mesh]: ");
  mesh.number("hop_cycles", t.hop_cycles);
  mesh.count("tiles_per_controller", t.tiles_per_controller);
  mesh.number("dram_ns", t.dram_ns);
  mesh.number("controller_gbps", t.controller_gbps);
  if (auto err = mesh.finish(); !err.empty()) return err;

  Reader numa(doc["numa"].as_table(), at + "[numa]: ");
  numa.count("cores_per_socket", t.cores_per_socket, 1);
  numa.count("sockets_per_board", t.sockets_per_board, 1);
  numa.numbers("memory_ns", t.memory_ns);
  numa.numbers("memory_gbps", t.memory_gbps);
  if (auto err = numa.finish(); !err.empty()) return err;

  // `like = "host"`: start from another topology's compute costs (the
  // calibrated host's), then apply this table's own keys.
  Reader compute(doc["compute"].as_table(), at + "[compute]: ");
  std::string like;
  compute.text("like", like);
  if (!like.empty()) {
    if (nested) return at + "[compute]: 'like' names a topology whose [compute] is itself 'like' another";
    if (like.find('/') != std::string::npos) return at + "[compute]: 'like' must name a topology beside this file";
    Topology base;
    if (auto err = load(directory_of(path) + like + ".toml", base, true); !err.empty()) return err;
    t.compute = base.compute;
  }
  compute.number("per_call_cycles", t.compute.per_call_cycles);
  compute.number("per_byte_cycles", t.compute.per_byte_cycles);
  compute.number("rmw_cycles", t.compute.rmw_cycles);
  compute.number("pause_cycles", t.compute.pause_cycles);
  compute.number("yield_ns", t.compute.yield_ns);
  compute.number("clock_cycles", t.compute.clock_cycles, 1);
  if (auto err = compute.finish(); !err.empty()) return err;

  if (t.layout == Layout::Mesh && !mesh.present()) return at + "a mesh layout needs a [mesh] table";
  if (t.layout == Layout::Numa) {
    if (!numa.present()) return at + "a numa layout needs a [numa] table";
    if (t.cores_per_socket == 0) return at + "[numa]: needs 'cores_per_socket'";
    if (t.memory_ns.empty()) return at + "[numa]: needs 'memory_ns'";
  }
  out = std::move(t);
  return {};
}

}  // namespace

std::string load_topology(const std::string& path, Topology& out) { return load(path, out, false); }

}  // namespace abyss::platform::sim
