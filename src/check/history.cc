#include "check/history.h"

#include <algorithm>
#include <array>
#include <istream>
#include <limits>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <nlohmann/json.hpp>

#include "platform/file.h"

namespace abyss::check {

using json = nlohmann::json;

std::string_view to_string(AnomalyKind kind) {
  switch (kind) {
    case AnomalyKind::LostUpdate:
      return "lost update";
    case AnomalyKind::UncommittedRead:
      return "read of uncommitted version";
    case AnomalyKind::UnknownPrevVersion:
      return "write over unknown version";
    case AnomalyKind::Cycle:
      return "cycle";
    case AnomalyKind::DuplicateId:
      return "duplicate id";
  }
  return "?";
}

std::string_view to_string(EdgeKind kind) {
  switch (kind) {
    case EdgeKind::WW:
      return "ww";
    case EdgeKind::WR:
      return "wr";
    case EdgeKind::RW:
      return "rw";
    case EdgeKind::PRW:
      return "prw";
    case EdgeKind::PWR:
      return "pwr";
  }
  return "?";
}

std::string_view to_string(Phenomenon p) {
  switch (p) {
    case Phenomenon::G0:
      return "G0";
    case Phenomenon::G1a:
      return "G1a";
    case Phenomenon::G1c:
      return "G1c";
    case Phenomenon::LostUpdate:
      return "lost update";
    case Phenomenon::GSingle:
      return "G-single";
    case Phenomenon::G2Item:
      return "G2-item";
    case Phenomenon::G2:
      return "G2";
  }
  return "?";
}

namespace {
constexpr std::array<std::string_view, kLevels> kLevelNames = {"serializable", "snapshot", "read-committed", "none"};
}  // namespace

std::string_view to_string(Level level) { return kLevelNames[static_cast<size_t>(level)]; }

bool parse_level(std::string_view name, Level& out) {
  for (size_t i = 0; i < kLevels; i++) {
    if (kLevelNames[i] == name) {
      out = static_cast<Level>(i);
      return true;
    }
  }
  return false;
}

bool Report::serializable() const {
  return std::all_of(anomaly_counts.begin(), anomaly_counts.end(), [](uint64_t n) { return n == 0; });
}

Level Report::strongest_level() const {
  if (serializable()) return Level::Serializable;
  if (count(AnomalyKind::DuplicateId) > 0 || count(Phenomenon::G0) > 0 || count(Phenomenon::G1a) > 0 ||
      count(Phenomenon::G1c) > 0) {
    return Level::None;
  }
  if (count(Phenomenon::LostUpdate) > 0 || count(Phenomenon::GSingle) > 0 || phenomena_cut) {
    return Level::ReadCommitted;
  }
  return Level::Snapshot;
}

std::string Report::summary() const {
  // How many anomaly descriptions a person wants to read before opening the fields.
  constexpr size_t kShown = 3;
  std::string s = "checked " + std::to_string(transactions) + " transactions (" + std::to_string(reads) + " reads, " +
                  std::to_string(writes) + " writes, " + (scans > 0 ? std::to_string(scans) + " scans, " : "") +
                  std::to_string(edges) + " dependency edges): ";
  if (serializable()) return s + "serializable.";
  s += "NOT serializable; anomalies:";
  const char* sep = " ";
  for (size_t k = 0; k < kAnomalyKinds; k++) {
    if (anomaly_counts[k] == 0) continue;
    s += sep;
    s += to_string(static_cast<AnomalyKind>(k));
    s += ": " + std::to_string(anomaly_counts[k]);
    sep = ", ";
  }
  s += ". First:";
  for (size_t i = 0; i < anomalies.size() && i < kShown; i++) {
    s += (i == 0 ? " " : "; ") + anomalies[i].description;
  }
  s += ".";
  if (anomalies.size() > kShown)
    s += " (" + std::to_string(anomalies.size() - kShown) + " more described in the report.)";
  s += "\nphenomena:";
  for (size_t p = 0; p < kPhenomena; p++) {
    if (phenomena[p] == 0) continue;
    s += "\n  " + std::string(to_string(static_cast<Phenomenon>(p))) + ": " + std::to_string(phenomena[p]) +
         (examples[p].empty() ? std::string() : ", e.g. " + examples[p]);
  }
  if (phenomena_cut) s += "\n  G-single: not searched to the end (the search's budget ran out): it may be there";
  s += "\nstrongest isolation level held: " + std::string(to_string(strongest_level())) + ".";
  return s;
}

namespace {

// Dense indexes keep the graph arrays small: 32 bits each for millions of
// transactions and keys.
using Node = uint32_t;
using KeyIndex = uint32_t;
constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

// One read or write entry. `version` is the writer_id of a read or the
// prev_writer_id of a write: either way, the id of the version's writer.
struct Access {
  Node txn;
  KeyIndex key;
  uint64_t version;
};

// A scan entry: the range of integer keys of `table` it observed, and the
// keys it saw there (as reads they are also in History::reads).
struct Scan {
  Node txn;
  uint32_t table;
  uint64_t lo;
  uint64_t hi;
  std::size_t seen_begin;
  std::size_t seen_end;
};

// A write that changed whether an integer key exists: an insert or a delete.
struct Member {
  uint32_t table;
  uint64_t key;
  Node txn;
  bool insert;
  KeyIndex key_index;
  auto operator<=>(const Member&) const = default;  // NOLINT(modernize-use-nullptr): the compiler's 0
};

// Interns (table, key) pairs. The integer key 1 and the string key "1" are
// different keys, as they are in the log.
class KeyTable {
 public:
  // Precondition: `table` is a string and `key` an unsigned integer or string.
  KeyIndex intern(const json& table, const json& key) {
    const uint32_t t = table_id(table.get_ref<const std::string&>());
    // Encoding: 4-byte table index, a tag, then the raw key. The tag and the
    // fixed-width table index make the encoding unambiguous.
    scratch_.assign(reinterpret_cast<const char*>(&t), sizeof(uint32_t));
    if (key.is_string()) {
      scratch_ += 's';
      scratch_ += key.get_ref<const std::string&>();
    } else {
      const uint64_t k = key.get<uint64_t>();
      scratch_ += 'i';
      scratch_.append(reinterpret_cast<const char*>(&k), sizeof k);
    }
    auto it = key_ids_.find(scratch_);
    if (it != key_ids_.end()) return it->second;
    if (encoded_.size() >= kNone) throw std::length_error("history holds more keys than the checker indexes");
    it = key_ids_.emplace(scratch_, static_cast<KeyIndex>(encoded_.size())).first;
    // unordered_map nodes never move, so the key string stays valid.
    encoded_.push_back(&it->first);
    return it->second;
  }

  // The table's dense index, given on first sight.
  uint32_t table_id(const std::string& name) {
    auto [t, new_table] = table_ids_.try_emplace(name, static_cast<uint32_t>(table_names_.size()));
    if (new_table) table_names_.push_back(name);
    return t->second;
  }

  // `table[42]` or `table["abc"]` (string keys JSON-quoted, so they cannot
  // be mistaken for integers).
  [[nodiscard]] std::string display(KeyIndex index) const {
    const std::string& e = *encoded_[index];
    uint32_t table = 0;
    std::memcpy(&table, e.data(), sizeof table);
    const char* payload = e.data() + sizeof table + 1;
    std::string key;
    if (e[sizeof table] == 's') {
      key = json(std::string(payload, e.size() - sizeof table - 1)).dump();
    } else {
      uint64_t k = 0;
      std::memcpy(&k, payload, sizeof k);
      key = std::to_string(k);
    }
    return table_names_[table] + "[" + key + "]";
  }

 private:
  std::unordered_map<std::string, uint32_t> table_ids_;
  std::vector<std::string> table_names_;
  std::unordered_map<std::string, KeyIndex> key_ids_;
  std::vector<const std::string*> encoded_;  // index -> key in key_ids_
  std::string scratch_;                      // reused so lookups of known keys do not allocate
};

// Counts an anomaly and says whether its details should be kept, so details
// are only formatted for the ones kept.
bool note(Report& report, AnomalyKind kind) {
  return report.anomaly_counts[static_cast<size_t>(kind)]++ < kMaxKeptPerKind;
}

std::string txn_name(uint64_t id) { return "T" + std::to_string(id); }

// The key space of a table's secondary index, apart from every table's own
// (a table name cannot hold the unit separator: abyss names are identifiers).
std::string index_space(const std::string& table, const std::string& index) { return table + '\x1f' + index; }

std::string version_name(uint64_t id) { return id == 0 ? "the initial version" : "the version of " + txn_name(id); }

// The log, parsed: transactions as dense nodes and every access flattened.
struct History {
  std::vector<uint64_t> ids;    // node -> transaction id
  std::vector<uint64_t> lines;  // node -> line it came from
  std::unordered_map<uint64_t, Node> node_of;
  std::vector<Access> reads;
  std::vector<Access> writes;
  std::vector<Scan> scans;
  std::vector<uint64_t> seen;  // the keys each scan saw, sorted per scan: scans[i].seen_begin ..
  std::vector<Member> members;
  KeyTable keys;
};

class Parser {
 public:
  Parser(const std::string& source, History& history, Report& report)
      : source_(source), history_(history), report_(report) {}

  // Parses each line that `next_line(text)` reads until it returns false;
  // returns how many it read.
  template <class NextLine>
  uint64_t parse(NextLine&& next_line) {
    std::string text;
    uint64_t line = 0;
    while (next_line(text)) {
      line++;
      if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
      try {
        parse_line(text, line);
      } catch (const std::length_error& e) {
        // Too big to index is still "cannot be checked", not a verdict.
        throw InputError(source_, line, e.what());
      }
    }
    return line;
  }

 private:
  [[noreturn]] void fail(uint64_t line, const std::string& message) const {
    throw HistoryFormatError(source_, line, message);
  }

  void parse_line(const std::string& text, uint64_t line) {
    json doc;
    try {
      doc = json::parse(text);
    } catch (const json::parse_error& e) {
      // nlohmann's text starts "[json.exception.parse_error.101] parse error
      // at line 1, column 21: ..."; the line is ours, the column is the news.
      const std::string what = e.what();
      const std::size_t column = what.find("column ");
      fail(line, "invalid JSON at " + (column == std::string::npos ? what : what.substr(column)));
    }
    if (!doc.is_object()) fail(line, "expected a JSON object {\"id\": ..., \"reads\": [...], \"writes\": [...]}");
    const json& id_field = field(doc, "id", line);
    if (!id_field.is_number_unsigned() || id_field.get<uint64_t>() == 0)
      fail(line, "\"id\" must be a positive integer (0 is reserved for the initial load), got " + id_field.dump());
    const uint64_t id = id_field.get<uint64_t>();
    const json& reads = list(doc, "reads", line);
    const json& writes = list(doc, "writes", line);

    if (history_.ids.size() >= kNone)
      throw std::length_error("history holds more transactions than the checker indexes");
    const auto node = static_cast<Node>(history_.ids.size());
    const auto [it, fresh] = history_.node_of.try_emplace(id, node);
    if (!fresh) {
      // The later line is dropped whole: two transactions cannot share a node,
      // and guessing which one is real would hide the bug.
      if (note(report_, AnomalyKind::DuplicateId)) {
        report_.anomalies.push_back({AnomalyKind::DuplicateId,
                                     "transaction id " + std::to_string(id) + " appears on line " +
                                         std::to_string(history_.lines[it->second]) + " and again on line " +
                                         std::to_string(line) + " (the later line is ignored)",
                                     {id},
                                     "",
                                     {}});
      }
      // Still validate the entries so a malformed duplicate is reported too.
      for (size_t i = 0; i < reads.size(); i++) validate_entry(reads[i], "reads", "writer_id", i, line);
      for (size_t i = 0; i < writes.size(); i++) validate_entry(writes[i], "writes", "prev_writer_id", i, line);
      if (const json* scans = optional_list(doc, "scans", line)) {
        for (size_t i = 0; i < scans->size(); i++) validate_scan((*scans)[i], i, line);
      }
      return;
    }
    history_.ids.push_back(id);
    history_.lines.push_back(line);
    for (size_t i = 0; i < reads.size(); i++) {
      history_.reads.push_back(access(node, reads[i], "reads", "writer_id", i, line));
    }
    for (size_t i = 0; i < writes.size(); i++) {
      const Access w = access(node, writes[i], "writes", "prev_writer_id", i, line);
      history_.writes.push_back(w);
      if (writes[i].size() >= 4 && writes[i][1].is_number_unsigned()) {
        const std::string& table = writes[i][0].get_ref<const std::string&>();
        const bool insert = writes[i][3] == "insert";
        history_.members.push_back({history_.keys.table_id(table), writes[i][1].get<uint64_t>(), node, insert, w.key});
        if (writes[i].size() == 5) {
          for (const auto& [index, key] : writes[i][4].items()) {
            history_.members.push_back(
                {history_.keys.table_id(index_space(table, index)), key.get<uint64_t>(), node, insert, w.key});
          }
        }
      }
    }
    if (const json* scans = optional_list(doc, "scans", line)) {
      for (size_t i = 0; i < scans->size(); i++) add_scan(node, (*scans)[i], i, line);
      report_.scans += scans->size();
    }
    report_.transactions++;
    report_.reads += reads.size();
    report_.writes += writes.size();
  }

  const json& field(const json& doc, const char* name, uint64_t line) const {
    const auto it = doc.find(name);
    if (it == doc.end()) fail(line, std::string("missing field \"") + name + "\"");
    return *it;
  }

  const json& list(const json& doc, const char* name, uint64_t line) const {
    const json& value = field(doc, name, line);
    if (!value.is_array()) fail(line, std::string("\"") + name + "\" must be an array, got " + value.dump());
    return value;
  }

  // An optional array field: null when absent.
  const json* optional_list(const json& doc, const char* name, uint64_t line) const {
    const auto it = doc.find(name);
    if (it == doc.end()) return nullptr;
    if (!it->is_array()) fail(line, std::string("\"") + name + "\" must be an array, got " + it->dump());
    return &*it;
  }

  // [table, lo, hi, [[key, writer_id], ...]] or, of a secondary index,
  // [table, lo, hi, [[key, writer_id], ...], index]: integer keys,
  // lo <= key <= hi.
  void validate_scan(const json& entry, size_t i, uint64_t line) const {
    const std::string where = "scans[" + std::to_string(i) + "]";
    if (!entry.is_array() || (entry.size() != 4 && entry.size() != 5) || !entry[3].is_array())
      fail(line, where + " must be [table, lo, hi, [[key, writer_id], ...]] (and an index), got " + entry.dump());
    if (!entry[0].is_string()) fail(line, where + "[0]: table must be a string, got " + entry[0].dump());
    if (entry.size() == 5 && (!entry[4].is_string() || entry[4].get_ref<const std::string&>().empty()))
      fail(line, where + "[4]: index must be a non-empty string, got " + entry[4].dump());
    if (!entry[1].is_number_unsigned() || !entry[2].is_number_unsigned() ||
        entry[1].get<uint64_t>() > entry[2].get<uint64_t>()) {
      fail(line, where + ": lo and hi must be non-negative integers with lo <= hi, got " + entry[1].dump() + " and " +
                     entry[2].dump());
    }
    const json& seen = entry[3];
    for (size_t k = 0; k < seen.size(); k++) {
      const std::string at = where + "[3][" + std::to_string(k) + "]";
      if (!seen[k].is_array() || seen[k].size() != 2 || !seen[k][0].is_number_unsigned() ||
          !seen[k][1].is_number_unsigned()) {
        fail(line, at + " must be [key, writer_id] of non-negative integers, got " + seen[k].dump());
      }
      const uint64_t key = seen[k][0].get<uint64_t>();
      if (key < entry[1].get<uint64_t>() || key > entry[2].get<uint64_t>())
        fail(line, at + ": key " + std::to_string(key) + " lies outside the scanned range");
    }
  }

  void add_scan(Node node, const json& entry, size_t i, uint64_t line) {
    validate_scan(entry, i, line);
    const std::string& table = entry[0].get_ref<const std::string&>();
    const bool secondary = entry.size() == 5;
    Scan scan{node,
              history_.keys.table_id(secondary ? index_space(table, entry[4].get_ref<const std::string&>()) : table),
              entry[1].get<uint64_t>(),
              entry[2].get<uint64_t>(),
              history_.seen.size(),
              0};
    for (const json& seen : entry[3]) {
      // What a scan of the primary keys saw, it read; the rows a secondary
      // index's scan saw are in "reads" under their primary keys.
      if (!secondary) {
        history_.reads.push_back({node, history_.keys.intern(entry[0], seen[0]), seen[1].get<uint64_t>()});
        report_.reads++;
      }
      history_.seen.push_back(seen[0].get<uint64_t>());
    }
    scan.seen_end = history_.seen.size();
    std::sort(history_.seen.begin() + static_cast<std::ptrdiff_t>(scan.seen_begin), history_.seen.end());
    history_.scans.push_back(scan);
  }

  void validate_entry(const json& entry, const char* list, const char* version_name, size_t i, uint64_t line) const {
    const std::string where = std::string(list) + "[" + std::to_string(i) + "]";
    const bool is_write = std::string_view(list) == "writes";
    if (is_write && entry.is_array() && (entry.size() == 4 || entry.size() == 5)) {
      if (entry[3] != "insert" && entry[3] != "delete")
        fail(line, where + "[3]: a write's kind must be \"insert\" or \"delete\", got " + entry[3].dump());
      if (entry.size() == 5) {
        if (!entry[4].is_object())
          fail(line, where + "[4]: index keys must be an object {index: key, ...}, got " + entry[4].dump());
        for (const auto& [index, key] : entry[4].items()) {
          if (index.empty() || !key.is_number_unsigned())
            fail(line, where + "[4]: index keys must map index names to non-negative integers, got " + entry[4].dump());
        }
      }
    } else if (!entry.is_array() || entry.size() != 3) {
      fail(line, where + " must be [table, key, " + version_name + "]" +
                     (is_write ? " (and \"insert\" or \"delete\")" : "") + ", got " + entry.dump());
    }
    if (!entry[0].is_string()) fail(line, where + "[0]: table must be a string, got " + entry[0].dump());
    if (!entry[1].is_number_unsigned() && !entry[1].is_string())
      fail(line, where + "[1]: key must be a non-negative integer or a string, got " + entry[1].dump());
    if (!entry[2].is_number_unsigned())
      fail(line, where + "[2]: " + version_name + " must be a non-negative integer, got " + entry[2].dump());
  }

  Access access(Node node, const json& entry, const char* list, const char* version_name, size_t i, uint64_t line) {
    validate_entry(entry, list, version_name, i, line);
    return {node, history_.keys.intern(entry[0], entry[1]), entry[2].get<uint64_t>()};
  }

  const std::string& source_;
  History& history_;
  Report& report_;
};

struct Edge {
  Node from;
  Node to;
  KeyIndex key;  // one key that causes the edge, for the report
  EdgeKind kind;
};

// A write seen from one of its versions: (key, version) sorted, so all
// writes of a key that replaced (or created) a given version are adjacent.
struct VersionRef {
  KeyIndex key;
  uint64_t version;
  Node txn;
  auto operator<=>(const VersionRef&) const = default;  // NOLINT(modernize-use-nullptr): the compiler's 0
};

class Checker {
 public:
  Checker(const History& history, Report& report) : h_(history), report_(report) {}

  void run() {
    index_writes();
    find_lost_updates();
    add_write_edges();
    add_read_edges();
    add_predicate_edges();
    build_graph();
    find_cycles();
    classify();
  }

 private:
  // Sorted lookups instead of hash maps of (key, version): two flat arrays of
  // 16-byte entries stay compact for tens of millions of writes.
  void index_writes() {
    by_writer_.reserve(h_.writes.size());
    by_prev_.reserve(h_.writes.size());
    for (const Access& w : h_.writes) {
      by_writer_.push_back({w.key, h_.ids[w.txn], w.txn});
      // A write whose prev is the writer itself replaced its own earlier
      // version; that is internal to the transaction and orders nothing.
      if (w.version != h_.ids[w.txn]) by_prev_.push_back({w.key, w.version, w.txn});
    }
    // A transaction that lists the same write twice is one write, not a lost update.
    for (auto* v : {&by_writer_, &by_prev_}) {
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
  }

  [[nodiscard]] std::span<const VersionRef> range(const std::vector<VersionRef>& v, KeyIndex key,
                                                  uint64_t version) const {
    const auto by_version = [](const VersionRef& a, const VersionRef& b) {
      return std::tie(a.key, a.version) < std::tie(b.key, b.version);
    };
    const VersionRef probe{key, version, 0};
    const auto [lo, hi] = std::equal_range(v.begin(), v.end(), probe, by_version);
    return {lo, hi};
  }

  // The node of the committed transaction `id` if it wrote `key`, else kNone.
  [[nodiscard]] Node writer_of(KeyIndex key, uint64_t id) const {
    const auto r = range(by_writer_, key, id);
    return r.empty() ? kNone : r.front().txn;
  }

  // Lost update, P4 in Berenson et al., "A Critique of ANSI SQL Isolation
  // Levels" (SIGMOD 1995): two writes both installed as the successor of one
  // version, so the key's version order forks and no serial order explains it.
  void find_lost_updates() {
    for (size_t i = 0; i < by_prev_.size();) {
      size_t j = i + 1;
      while (j < by_prev_.size() && by_prev_[j].key == by_prev_[i].key && by_prev_[j].version == by_prev_[i].version)
        j++;
      if (j - i > 1 && note(report_, AnomalyKind::LostUpdate)) {
        Anomaly a{AnomalyKind::LostUpdate, "", {}, h_.keys.display(by_prev_[i].key), {}};
        std::string names;
        for (size_t k = i; k < j; k++) {
          a.txns.push_back(h_.ids[by_prev_[k].txn]);
          names += (k == i ? "" : k + 1 == j ? " and " : ", ") + txn_name(a.txns.back());
        }
        std::sort(a.txns.begin(), a.txns.end());
        a.description =
            "lost update on " + a.key + ": " + names + " each replaced " + version_name(by_prev_[i].version);
        report_.anomalies.push_back(std::move(a));
      }
      i = j;
    }
  }

  // ww: the writer of the replaced version precedes the writer that replaced it.
  void add_write_edges() {
    for (const VersionRef& w : by_prev_) {
      if (w.version == 0) continue;  // the initial load is not a node
      const Node prev = writer_of(w.key, w.version);
      if (prev != kNone) {
        edges_.push_back({prev, w.txn, w.key, EdgeKind::WW});
      } else if (note(report_, AnomalyKind::UnknownPrevVersion)) {
        const uint64_t id = h_.ids[w.txn];
        const std::string key = h_.keys.display(w.key);
        report_.anomalies.push_back(
            {AnomalyKind::UnknownPrevVersion,
             txn_name(id) + " wrote " + key + " over " + version_name(w.version) + ", " + why_unknown(w.version, key),
             {id, w.version},
             key,
             {}});
      }
    }
  }

  // wr: the writer of a version precedes its readers. rw (Adya's
  // anti-dependency): a reader precedes whoever replaced the version it read.
  void add_read_edges() {
    for (const Access& r : h_.reads) {
      if (r.version != 0) {
        const Node writer = writer_of(r.key, r.version);
        if (writer == kNone) {
          if (note(report_, AnomalyKind::UncommittedRead)) {
            const uint64_t id = h_.ids[r.txn];
            const std::string key = h_.keys.display(r.key);
            report_.anomalies.push_back(
                {AnomalyKind::UncommittedRead,
                 txn_name(id) + " read " + key + " at " + version_name(r.version) + ", " + why_unknown(r.version, key),
                 {id, r.version},
                 key,
                 {}});
          }
        } else if (writer != r.txn) {  // reading one's own write orders nothing
          edges_.push_back({writer, r.txn, r.key, EdgeKind::WR});
        }
      }
      // Even for an unknown version the overwriters are real: the read still
      // had to happen before they replaced it.
      for (const VersionRef& next : range(by_prev_, r.key, r.version)) {
        if (next.txn != r.txn) edges_.push_back({r.txn, next.txn, r.key, EdgeKind::RW});
      }
    }
  }

  // Predicate dependencies (Adya et al. §4.2, for key ranges): a key in a
  // scanned range that the scan did not see was absent from what it
  // observed. An unseen key with
  //   an insert and no delete was not inserted yet: the scan precedes the
  //     insert (prw);
  //   a delete and no insert (a loaded row) was deleted already: the delete
  //     precedes the scan (pwr);
  //   both (a key deleted and inserted again, once or more) could be
  //     either, and orders nothing here.
  // A key the scan saw is a read, with the read's edges.
  void add_predicate_edges() {
    if (h_.scans.empty()) return;
    std::vector<Member> members = h_.members;
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());
    const auto by_key = [](const Member& a, const Member& b) {
      return std::tie(a.table, a.key) < std::tie(b.table, b.key);
    };
    for (const Scan& scan : h_.scans) {
      const auto seen_begin = h_.seen.begin() + static_cast<std::ptrdiff_t>(scan.seen_begin);
      const auto seen_end = h_.seen.begin() + static_cast<std::ptrdiff_t>(scan.seen_end);
      auto it = std::lower_bound(members.begin(), members.end(), Member{scan.table, scan.lo, 0, false, 0}, by_key);
      while (it != members.end() && it->table == scan.table && it->key <= scan.hi) {
        auto end = it;
        bool inserted = false;
        bool deleted = false;
        for (; end != members.end() && end->table == it->table && end->key == it->key; ++end) {
          (end->insert ? inserted : deleted) = true;
        }
        if (inserted != deleted && !std::binary_search(seen_begin, seen_end, it->key)) {
          for (auto m = it; m != end; ++m) {
            if (m->txn == scan.txn) continue;
            if (m->insert) {
              edges_.push_back({scan.txn, m->txn, m->key_index, EdgeKind::PRW});
            } else {
              edges_.push_back({m->txn, scan.txn, m->key_index, EdgeKind::PWR});
            }
          }
        }
        it = end;
      }
    }
  }

  [[nodiscard]] std::string why_unknown(uint64_t id, const std::string& key) const {
    if (h_.node_of.contains(id)) return "but " + txn_name(id) + " committed without writing " + key;
    return "which is not a committed transaction (aborted, still running, or never existed)";
  }

  // Compressed adjacency (CSR): edges sorted by source, offsets_[v] .. offsets_[v + 1].
  void build_graph() {
    std::sort(edges_.begin(), edges_.end(), [](const Edge& a, const Edge& b) {
      return std::tie(a.from, a.to, a.kind, a.key) < std::tie(b.from, b.to, b.kind, b.key);
    });
    // Parallel edges of one kind say nothing new; the first (lowest key index) explains it.
    edges_.erase(
        std::unique(edges_.begin(), edges_.end(),
                    [](const Edge& a, const Edge& b) { return a.from == b.from && a.to == b.to && a.kind == b.kind; }),
        edges_.end());
    report_.edges = edges_.size();
    offsets_.assign(h_.ids.size() + 1, 0);
    for (const Edge& e : edges_) offsets_[e.from + 1]++;
    for (size_t v = 0; v < h_.ids.size(); v++) offsets_[v + 1] += offsets_[v];
  }

  static bool any_edge(EdgeKind /*kind*/) { return true; }
  static bool write_dependency(EdgeKind kind) { return kind == EdgeKind::WW; }
  // ww, wr and a scan's pwr: the edges of Adya's G1c.
  static bool dependency(EdgeKind kind) { return kind != EdgeKind::RW && kind != EdgeKind::PRW; }

  // Iterative Tarjan SCC over the edges `keep` admits: an explicit stack of
  // (node, next edge) frames, because a serial chain of millions of
  // transactions would overflow the call stack. Fills comp (node ->
  // component, numbered in the order they complete) and answers how many.
  template <class Keep>
  uint32_t strong_components(Keep&& keep, std::vector<uint32_t>& comp) const {
    const size_t n = h_.ids.size();
    std::vector<uint32_t> order(n, kNone);  // DFS discovery index
    std::vector<uint32_t> low(n, 0);
    std::vector<bool> on_stack(n, false);
    comp.assign(n, kNone);
    std::vector<Node> stack;
    struct Frame {
      Node v;
      size_t next_edge;
    };
    std::vector<Frame> frames;
    uint32_t counter = 0;
    uint32_t components = 0;

    const auto discover = [&](Node v) {
      order[v] = low[v] = counter++;
      stack.push_back(v);
      on_stack[v] = true;
      frames.push_back({v, offsets_[v]});
    };

    for (Node root = 0; root < n; root++) {
      if (order[root] != kNone) continue;
      discover(root);
      while (!frames.empty()) {
        const Node v = frames.back().v;
        if (frames.back().next_edge < offsets_[v + 1]) {
          const Edge& e = edges_[frames.back().next_edge++];
          if (!keep(e.kind)) continue;
          if (order[e.to] == kNone) {
            discover(e.to);
          } else if (on_stack[e.to]) {
            low[v] = std::min(low[v], order[e.to]);
          }
          continue;
        }
        frames.pop_back();
        if (!frames.empty()) low[frames.back().v] = std::min(low[frames.back().v], low[v]);
        if (low[v] != order[v]) continue;
        // v is the root of a component: everything above it on the stack.
        const uint32_t c = components++;
        Node w = kNone;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = false;
          comp[w] = c;
        } while (w != v);
      }
    }
    return components;
  }

  // Every component with more than one node holds a cycle (there are no
  // self edges), and each is reported once.
  void find_cycles() {
    const uint32_t count = strong_components(any_edge, component_);
    component_size_.assign(count, 0);
    std::vector<Node> smallest(count, kNone);
    for (Node v = 0; v < h_.ids.size(); v++) {
      const uint32_t c = component_[v];
      component_size_[c]++;
      if (smallest[c] == kNone || h_.ids[v] < h_.ids[smallest[c]]) smallest[c] = v;
    }
    for (uint32_t c = 0; c < count; c++) {
      if (component_size_[c] > 1 && note(report_, AnomalyKind::Cycle)) report_cycle(smallest[c], c);
    }
  }

  // Breadth-first search inside `from`'s component, over the edges `keep`
  // admits, for the shortest path from `from` to `to` (to itself: a cycle).
  // Fills `path` with its edges in order; false when there is none, or when
  // it would take more than `budget` more edge visits (then `budget` is 0).
  template <class Keep>
  bool shortest_path(Node from, Node to, Keep&& keep, uint64_t& budget, std::vector<size_t>& path) {
    if (parent_edge_.empty()) parent_edge_.assign(h_.ids.size(), kNoEdge);
    const uint32_t component = component_[from];
    std::vector<Node> queue{from};
    std::vector<Node> touched;
    size_t closing = kNoEdge;
    for (size_t head = 0; head < queue.size() && closing == kNoEdge && budget > 0; head++) {
      const Node v = queue[head];
      for (size_t e = offsets_[v]; e < offsets_[v + 1]; e++) {
        if (budget == 0) break;
        budget--;
        const Node w = edges_[e].to;
        if (component_[w] != component || !keep(edges_[e].kind)) continue;
        if (w == to) {
          closing = e;
          break;
        }
        if (w == from || parent_edge_[w] != kNoEdge) continue;
        parent_edge_[w] = e;
        touched.push_back(w);
        queue.push_back(w);
      }
    }
    path.clear();
    if (closing != kNoEdge) {
      path.push_back(closing);  // edges, walked backwards from the closing one
      for (Node v = edges_[closing].from; v != from; v = edges_[parent_edge_[v]].from) path.push_back(parent_edge_[v]);
      std::reverse(path.begin(), path.end());
    }
    for (Node w : touched) parent_edge_[w] = kNoEdge;
    return closing != kNoEdge;
  }

  // "T1 -rw t[1]-> T2 -ww t[2]-> T1": a cycle's edges from its first node.
  [[nodiscard]] std::string describe_cycle(const std::vector<size_t>& path) const {
    std::string s = txn_name(h_.ids[edges_[path.front()].from]);
    for (size_t e : path) {
      const Edge& edge = edges_[e];
      s += " -" + std::string(to_string(edge.kind)) + " " + h_.keys.display(edge.key) + "-> " +
           txn_name(h_.ids[edge.to]);
    }
    return s;
  }

  // The shortest cycle through `start`, the component's smallest id, so the
  // report does not depend on the order of the log lines.
  void report_cycle(Node start, uint32_t component) {
    std::vector<size_t> path;
    uint64_t unlimited = ~uint64_t{0};
    // A strongly connected component of two or more nodes always has a path back.
    if (!shortest_path(start, start, any_edge, unlimited, path))
      throw std::logic_error("history checker: no cycle found inside a strongly connected component");
    Anomaly a{AnomalyKind::Cycle, "", {}, "", {}};
    a.description = "cycle of " + std::to_string(path.size()) + " transactions (in a strongly connected set of " +
                    std::to_string(component_size_[component]) + "): " + describe_cycle(path);
    for (size_t e : path) {
      a.txns.push_back(h_.ids[edges_[e].from]);
      a.cycle_edges.push_back(edges_[e].kind);
    }
    report_.anomalies.push_back(std::move(a));
  }

  // Edge visits the search for G-single may make over the whole history: a
  // history of write skew alone (SI's) has no G-single, and proving that
  // takes a search from every anti-dependency.
  static constexpr uint64_t kSingleSearchBudget = uint64_t{200} << 20;

  // Adya's phenomena and their examples (Report::phenomena). G1a and lost
  // updates are anomalies found already. Each cycle's phenomena are looked
  // for inside each strongly connected set of the DSG: G0 where the ww
  // edges alone make one, G1c where the dependency edges make one through
  // a read dependency, G-single where a path of dependencies leads back
  // from an anti-dependency's end to its start, G2-item and G2 where an
  // rw or prw edge lies inside the set (each edge of a strongly connected
  // set lies on a cycle of it).
  void classify() {
    auto found = [&](Phenomenon p, const std::string& example) {
      if (report_.phenomena[static_cast<size_t>(p)]++ == 0) report_.examples[static_cast<size_t>(p)] = example;
    };
    for (const Anomaly& a : report_.anomalies) {
      if (a.kind == AnomalyKind::UncommittedRead || a.kind == AnomalyKind::UnknownPrevVersion) {
        if (report_.examples[static_cast<size_t>(Phenomenon::G1a)].empty())
          report_.examples[static_cast<size_t>(Phenomenon::G1a)] = a.description;
      }
      if (a.kind == AnomalyKind::LostUpdate && report_.examples[static_cast<size_t>(Phenomenon::LostUpdate)].empty())
        report_.examples[static_cast<size_t>(Phenomenon::LostUpdate)] = a.description;
    }
    report_.phenomena[static_cast<size_t>(Phenomenon::G1a)] =
        report_.count(AnomalyKind::UncommittedRead) + report_.count(AnomalyKind::UnknownPrevVersion);
    report_.phenomena[static_cast<size_t>(Phenomenon::LostUpdate)] = report_.count(AnomalyKind::LostUpdate);
    if (report_.count(AnomalyKind::Cycle) == 0) return;

    std::vector<uint32_t> ww_comp;
    std::vector<uint32_t> dep_comp;
    (void)strong_components(write_dependency, ww_comp);
    (void)strong_components(dependency, dep_comp);
    // Per strongly connected set of the DSG: which phenomena it has shown.
    std::vector<uint8_t> shown(component_size_.size(), 0);
    const auto first_in_set = [&](size_t e, Phenomenon p) {
      const uint8_t bit = uint8_t{1} << static_cast<unsigned>(p);
      uint8_t& s = shown[component_[edges_[e].from]];
      if ((s & bit) != 0) return false;
      s |= bit;
      return true;
    };
    uint64_t budget = kSingleSearchBudget;
    std::vector<size_t> back;
    for (size_t e = 0; e < edges_.size(); e++) {
      const Edge& edge = edges_[e];
      if (component_[edge.from] != component_[edge.to]) continue;  // on no cycle
      // The cycle through this edge: the edge, then a path back over `keep`.
      const auto cycle_through = [&](auto keep) {
        uint64_t unlimited = ~uint64_t{0};
        std::vector<size_t> path{e};
        if (shortest_path(edge.to, edge.from, keep, unlimited, back)) path.insert(path.end(), back.begin(), back.end());
        return describe_cycle(path);
      };
      switch (edge.kind) {
        case EdgeKind::WW:
          if (ww_comp[edge.from] == ww_comp[edge.to] && first_in_set(e, Phenomenon::G0))
            found(Phenomenon::G0, cycle_through(write_dependency));
          break;
        case EdgeKind::WR:
        case EdgeKind::PWR:
          if (dep_comp[edge.from] == dep_comp[edge.to] && first_in_set(e, Phenomenon::G1c))
            found(Phenomenon::G1c, cycle_through(dependency));
          break;
        case EdgeKind::RW:
        case EdgeKind::PRW: {
          const Phenomenon two = edge.kind == EdgeKind::RW ? Phenomenon::G2Item : Phenomenon::G2;
          if (first_in_set(e, two)) found(two, cycle_through(any_edge));
          const uint8_t single = uint8_t{1} << static_cast<unsigned>(Phenomenon::GSingle);
          if ((shown[component_[edge.from]] & single) != 0) break;
          // Ends in one strongly connected set of the dependency edges: a
          // path back exists (found without a budget); else searched for.
          const bool joined = dep_comp[edge.from] == dep_comp[edge.to];
          if (!joined && budget == 0) {
            report_.phenomena_cut = true;
            break;
          }
          uint64_t unlimited = ~uint64_t{0};
          if (shortest_path(edge.to, edge.from, dependency, joined ? unlimited : budget, back) &&
              first_in_set(e, Phenomenon::GSingle)) {
            std::vector<size_t> path{e};
            path.insert(path.end(), back.begin(), back.end());
            found(Phenomenon::GSingle, describe_cycle(path));
          } else if (budget == 0) {
            report_.phenomena_cut = true;
          }
          break;
        }
      }
    }
  }

  static constexpr size_t kNoEdge = std::numeric_limits<size_t>::max();

  const History& h_;
  Report& report_;
  std::vector<VersionRef> by_writer_;  // (key, writer id): which committed transactions wrote a key
  std::vector<VersionRef> by_prev_;    // (key, prev writer id): which writes replaced a version
  std::vector<Edge> edges_;
  std::vector<size_t> offsets_;
  std::vector<uint32_t> component_;       // node -> strongly connected set of the DSG
  std::vector<uint32_t> component_size_;  // set -> its nodes
  std::vector<size_t> parent_edge_;       // BFS tree for shortest_path; kNoEdge when unvisited
};

}  // namespace

Report check_history(std::istream& in, const std::string& source) {
  Report report;
  History history;
  const uint64_t lines = Parser(source, history, report).parse([&](std::string& text) {
    return static_cast<bool>(std::getline(in, text));
  });
  if (in.bad()) throw InputError(source, lines + 1, "read error");
  Checker(history, report).run();
  return report;
}

Report check_history_file(const std::string& path) {
  // Said as such, not as the failed open it would be.
  if (platform::file_status(path).kind == platform::FileKind::kDirectory) {
    throw InputError(path, 0, "cannot read: is a directory");
  }
  platform::LineReader in;
  if (auto err = in.open(path); !err.empty()) throw InputError(path, 0, "cannot open: " + err);
  Report report;
  History history;
  const uint64_t lines = Parser(path, history, report).parse([&](std::string& text) { return in.next(text); });
  if (!in.error().empty()) throw InputError(path, lines + 1, "read error: " + in.error());
  Checker(history, report).run();
  return report;
}

}  // namespace abyss::check
