#pragma once
// TATP (the Telecom Application Transaction Processing benchmark, v1.0): a
// home location register of mobile subscribers, read-mostly. Seven
// transactions at the standard mix: GET_SUBSCRIBER_DATA 35%,
// GET_NEW_DESTINATION 10%, GET_ACCESS_DATA 35% (reads, 80%),
// UPDATE_SUBSCRIBER_DATA 2%, UPDATE_LOCATION 14%, INSERT_CALL_FORWARDING 2%
// and DELETE_CALL_FORWARDING 2%. Every transaction touches one subscriber,
// drawn with the spec's non-uniform rule; three find it through its
// SUB_NBR (a 15-digit string) in a secondary index.
//
// Four tables:
//   SUBSCRIBER        S_ID, SUB_NBR, bit_1..10, hex_1..10, byte2_1..10,
//                     MSC_LOCATION, VLR_LOCATION; a hash index on S_ID and an
//                     ordered one on SUB_NBR. The ten bits and the ten hex
//                     digits are packed into one integer column each, and
//                     the ten bytes into one 10-byte column.
//   ACCESS_INFO       (S_ID, AI_TYPE 1..4), DATA1..4; a hash index.
//   SPECIAL_FACILITY  (S_ID, SF_TYPE 1..4), IS_ACTIVE, ERROR_CNTRL, DATA_A,
//                     DATA_B; an ordered index, so a subscriber's facilities
//                     are a range.
//   CALL_FORWARDING   (S_ID, SF_TYPE, START_TIME 0|8|16), END_TIME, NUMBERX;
//                     an ordered index. Inserted into and deleted from, so a
//                     key's presence is read by a scan of [key, key], which
//                     every scheme makes phantom-safe: two inserts of one key
//                     cannot both commit, nor can a delete and a read that
//                     missed the row.
//
// A transaction that finds no row to read commits having read nothing (the
// spec counts it unsuccessful); one that finds no row to change, or a row
// already there to insert, rolls back (a logical abort).
//
// The consistency check (check()): ACCESS_INFO and SPECIAL_FACILITY rows
// each belong to a subscriber, and CALL_FORWARDING rows each to a special
// facility, every row is indexed under the key its columns give (a
// duplicate insert leaves one unindexed), and CALL_FORWARDING holds as many
// rows as the load plus the committed inserts minus the committed deletes.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.h"
#include "common/knob.h"
#include "common/types.h"
#include "common/zipf.h"
#include "storage/database.h"
#include "txn/txn.h"
#include "workload/mix.h"
#include "workload/tatp/tatp_config.h"
#include "workload/traits.h"

namespace abyss {

class Tatp final {
 public:
  static constexpr WorkloadTraits kTraits{
      .name = "tatp",
      .summary = "a telecom subscriber register: seven short transactions, 80% reads",
      .spec = "TATP benchmark description, version 1.0 (2009)",
  };
  enum Type : uint8_t {
    GetSubscriberData,
    GetNewDestination,
    GetAccessData,
    UpdateSubscriberData,
    UpdateLocation,
    InsertCallForwarding,
    DeleteCallForwarding
  };
  static constexpr std::array<std::string_view, 7> kTypeNames = {
      "get_subscriber_data", "get_new_destination",    "get_access_data",       "update_subscriber_data",
      "update_location",     "insert_call_forwarding", "delete_call_forwarding"};
  // The mix, in percent, in type order.
  static constexpr std::array<uint32_t, 7> kMix = {35, 10, 35, 2, 14, 2, 2};

  // Keys. A subscriber's four access-info and four special-facility slots,
  // and a facility's three call-forwarding slots (START_TIME 0, 8, 16).
  static constexpr uint64_t subscriber_key(uint64_t s_id) { return s_id; }
  static constexpr uint64_t access_info_key(uint64_t s_id, uint64_t ai_type) { return s_id * 4 + ai_type - 1; }
  static constexpr uint64_t facility_key(uint64_t s_id, uint64_t sf_type) { return s_id * 4 + sf_type - 1; }
  static constexpr uint64_t forwarding_key(uint64_t s_id, uint64_t sf_type, uint64_t start_time) {
    return facility_key(s_id, sf_type) * 3 + start_time / 8;
  }
  // SUB_NBR: the subscriber id as 15 decimal digits, zero-padded.
  static constexpr uint32_t kSubNbrDigits = 15;
  static void sub_nbr(uint64_t s_id, char* out);

  static std::span<const WorkloadMetric> metrics() { return {}; }
  // --subscribers (tatp.cc).
  static std::vector<Knob> knobs();
  static std::string validate(const Config& config);
  // A subscriber is in partition S_ID % partitions, one per worker: every
  // transaction touches one subscriber, so one partition.
  static uint32_t partitions(const Config& config);

  struct Query {
    uint32_t s_id;
    uint32_t vlr_location;  // UPDATE_LOCATION's new location
    uint64_t numberx;       // INSERT_CALL_FORWARDING's number
    uint8_t type;
    uint8_t kind;        // AI_TYPE or SF_TYPE, 1..4
    uint8_t start_time;  // 0, 8 or 16
    uint8_t end_time;    // GET_NEW_DESTINATION: 1..24; INSERT_CALL_FORWARDING: START_TIME + 1..8
    uint8_t bit;         // UPDATE_SUBSCRIBER_DATA's bit_1
    uint8_t data_a;      // UPDATE_SUBSCRIBER_DATA's DATA_A
  };
  struct Queries {
    std::vector<Query> queries;
    std::size_t size() const { return queries.size(); }
  };

  explicit Tatp(const Config& config);

  void load(Database& db, uint32_t loaders, void (*init_row)(void* meta));
  // After a recovery: the recovered CALL_FORWARDING rows are the start.
  void resume(const Database& db);
  Queries generate(uint32_t worker, uint32_t count, Rng& rng) const;
  // A subscriber id by the spec's rule: (rnd(0, A) | rnd(1, P)) % P + 1, A
  // by the population's size.
  uint32_t draw_subscriber(Rng& rng) const;
  static uint64_t estimate_load_bytes(const Config& config, std::size_t meta_size, std::size_t meta_align,
                                      uint32_t loaders);
  static uint64_t estimate_worker_bytes(const Config& config, std::size_t meta_size = 0, std::size_t meta_align = 0);
  uint8_t type_of(const Queries& qs, std::size_t i) const { return qs.queries[i].type; }
  void partitions_of(const Queries& qs, std::size_t i, std::vector<uint32_t>& out) const {
    out.assign(1, qs.queries[i].s_id % partitions_);
  }

  // The worker's last attempt committed: its inserted or deleted row counts.
  void committed(uint32_t worker) const { ledger_.committed(worker); }
  // The references and keys of every row, and CALL_FORWARDING's row count.
  std::vector<ConsistencyCheck> check() const;

  template <class CC>
  Rc run(Txn<CC>& txn, const Queries& qs, std::size_t i, uint64_t& sink) const {
    const Query& q = qs.queries[i];
    int64_t& rows = ledger_.attempt(txn.worker().id.value);
    rows = 0;
    switch (q.type) {
      case GetSubscriberData: {
        const char* d = nullptr;
        if (Rc rc = txn.read(*subscriber_, subscriber_key(q.s_id), d); rc != Rc::Ok) return rc;
        sink += static_cast<uint64_t>(get_int64(d, s_.bits) + get_int64(d, s_.vlr_location));
        return Rc::Ok;
      }
      case GetNewDestination:
        return get_new_destination(txn, q, sink);
      case GetAccessData: {
        const char* d = nullptr;
        const Rc rc = txn.read(*access_info_, access_info_key(q.s_id, q.kind), d);
        if (rc == Rc::NotFound) return Rc::Ok;  // no such access type: nothing to read
        if (rc == Rc::Ok) sink += static_cast<uint64_t>(get_int64(d, ai_data1_));
        return rc;
      }
      case UpdateSubscriberData: {
        char* d = nullptr;
        if (Rc rc = txn.update(*subscriber_, subscriber_key(q.s_id), d, kBitsColumn); rc != Rc::Ok) return rc;
        set_int64(d, s_.bits, (get_int64(d, s_.bits) & ~int64_t{1}) | q.bit);
        const Rc rc = txn.update(*facility_, facility_key(q.s_id, q.kind), d, kDataAColumn);
        if (rc == Rc::NotFound) return Rc::LogicalAbort;  // no such facility: the update rolls back
        if (rc == Rc::Ok) set_int64(d, sf_.data_a, q.data_a);
        return rc;
      }
      case UpdateLocation: {
        uint64_t s_id = 0;
        if (Rc rc = find_by_sub_nbr(txn, q.s_id, s_id); rc != Rc::Ok) return rc;
        char* d = nullptr;
        if (Rc rc = txn.update(*subscriber_, subscriber_key(s_id), d, kVlrColumn); rc != Rc::Ok) return rc;
        set_int64(d, s_.vlr_location, q.vlr_location);
        return Rc::Ok;
      }
      case InsertCallForwarding:
        return insert_call_forwarding(txn, redrawn(q, txn.worker().id.value), rows);
      default:  // DeleteCallForwarding
        return delete_call_forwarding(txn, redrawn(q, txn.worker().id.value), rows);
    }
  }

 private:
  struct SubscriberCols {
    Column s_id, sub_nbr, bits, hexes, bytes, msc_location, vlr_location;
  };
  struct FacilityCols {
    Column s_id, sf_type, is_active, error_cntrl, data_a, data_b;
  };
  struct ForwardingCols {
    Column s_id, sf_type, start_time, end_time, numberx;
  };
  static constexpr uint64_t kBitsColumn = uint64_t{1} << 2;   // SUBSCRIBER's bit_1..10
  static constexpr uint64_t kVlrColumn = uint64_t{1} << 6;    // SUBSCRIBER's VLR_LOCATION
  static constexpr uint64_t kDataAColumn = uint64_t{1} << 4;  // SPECIAL_FACILITY's DATA_A
  static constexpr uint32_t kSubNbrIndex = 1;                 // SUBSCRIBER's index on SUB_NBR
  static constexpr uint64_t kLoadBlockRows = 16384;
  static Schema subscriber_schema();
  static Schema access_info_schema();
  static Schema facility_schema();
  static Schema forwarding_schema();
  static uint64_t subscriber_primary_key(const char* data);
  static uint64_t sub_nbr_key(const char* data);

  // SELECT s_id FROM SUBSCRIBER WHERE sub_nbr = <the id's SUB_NBR>.
  template <class CC>
  Rc find_by_sub_nbr(Txn<CC>& txn, uint64_t id, uint64_t& s_id) const {
    bool found = false;
    const Rc rc = txn.scan(*subscriber_, kSubNbrIndex, id, id, 1, ScanOrder::Ascending, [&](uint64_t, const char* d) {
      s_id = static_cast<uint64_t>(get_int64(d, s_.s_id));
      found = true;
      return false;
    });
    if (rc != Rc::Ok) return rc;
    return found ? Rc::Ok : Rc::LogicalAbort;
  }

  template <class CC>
  Rc get_new_destination(Txn<CC>& txn, const Query& q, uint64_t& sink) const {
    const char* d = nullptr;
    const Rc rc = txn.read(*facility_, facility_key(q.s_id, q.kind), d);
    if (rc == Rc::NotFound) return Rc::Ok;
    if (rc != Rc::Ok) return rc;
    if (get_int64(d, sf_.is_active) != 1) return Rc::Ok;
    const uint64_t first = forwarding_key(q.s_id, q.kind, 0);
    return txn.scan(*forwarding_, first, first + 2, 3, ScanOrder::Ascending, [&](uint64_t, const char* cf) {
      if (get_int64(cf, cf_.start_time) <= q.start_time && q.end_time < get_int64(cf, cf_.end_time)) {
        sink += static_cast<unsigned char>(cf[cf_.numberx.offset]);
      }
      return true;
    });
  }

  // Whether CALL_FORWARDING holds `key`, read by a scan of [key, key] so
  // that a concurrent insert or delete of it is ordered against this read.
  template <class CC>
  Rc forwarding_present(Txn<CC>& txn, uint64_t key, bool& present) const {
    present = false;
    return txn.scan(*forwarding_, key, key, 1, ScanOrder::Ascending, [&](uint64_t, const char*) {
      present = true;
      return false;
    });
  }

  template <class CC>
  Rc insert_call_forwarding(Txn<CC>& txn, const Query& q, int64_t& rows) const {
    uint64_t s_id = 0;
    if (Rc rc = find_by_sub_nbr(txn, q.s_id, s_id); rc != Rc::Ok) return rc;
    // SELECT sf_type FROM SPECIAL_FACILITY WHERE s_id = ?: the new row's
    // facility must be among them.
    bool facility = false;
    const Rc rc = txn.scan(*facility_, facility_key(s_id, 1), facility_key(s_id, 4), 4, ScanOrder::Ascending,
                           [&](uint64_t key, const char*) {
                             facility |= key == facility_key(s_id, q.kind);
                             return true;
                           });
    if (rc != Rc::Ok) return rc;
    if (!facility) return Rc::LogicalAbort;
    const uint64_t key = forwarding_key(s_id, q.kind, q.start_time);
    bool present = false;
    if (Rc r = forwarding_present(txn, key, present); r != Rc::Ok) return r;
    if (present) return Rc::LogicalAbort;  // the key is taken
    char* d = nullptr;
    if (Rc r = txn.insert(*forwarding_, key, d); r != Rc::Ok) return r;
    set_int64(d, cf_.s_id, static_cast<int64_t>(s_id));
    set_int64(d, cf_.sf_type, q.kind);
    set_int64(d, cf_.start_time, q.start_time);
    set_int64(d, cf_.end_time, q.end_time);
    number(q.numberx, d + cf_.numberx.offset);
    rows = 1;
    return Rc::Ok;
  }

  template <class CC>
  Rc delete_call_forwarding(Txn<CC>& txn, const Query& q, int64_t& rows) const {
    uint64_t s_id = 0;
    if (Rc rc = find_by_sub_nbr(txn, q.s_id, s_id); rc != Rc::Ok) return rc;
    const uint64_t key = forwarding_key(s_id, q.kind, q.start_time);
    bool present = false;
    if (Rc rc = forwarding_present(txn, key, present); rc != Rc::Ok) return rc;
    if (!present) return Rc::LogicalAbort;  // nothing to delete
    if (Rc rc = txn.remove(*forwarding_, key); rc != Rc::Ok) return rc;
    rows = -1;
    return Rc::Ok;
  }

  // The query with its subscriber (in the same partition, which H-STORE
  // declared), facility, start and end time and number drawn anew from the
  // worker's generator. The pre-generated queries are served round robin,
  // and inserts and deletes that named the same rows each time round would
  // find them as their last runs left them (the inserts' subscribers full,
  // the deletes' empty): each attempt draws its row.
  Query redrawn(const Query& q, uint32_t worker) const;
  static void draw_call_forwarding(Query& q, Rng& rng);
  // A 15-digit number's digits, zero-padded.
  static void number(uint64_t n, char* out);
  // The live CALL_FORWARDING rows.
  uint64_t forwarding_rows() const;

  // A worker's generator for redrawn(), on its own cache line.
  struct alignas(64) Redraw {
    Rng rng{1};
  };

  const TatpConfig& cfg_;
  uint32_t partitions_;
  uint32_t a_;  // the non-uniform rule's A
  Table* subscriber_ = nullptr;
  Table* access_info_ = nullptr;
  Table* facility_ = nullptr;
  Table* forwarding_ = nullptr;
  SubscriberCols s_;
  FacilityCols sf_;
  ForwardingCols cf_;
  Column ai_s_id_;
  Column ai_type_;
  Column ai_data1_;
  uint64_t start_rows_ = 0;             // CALL_FORWARDING's rows after the load (or recovery)
  mutable CommitLedger ledger_;         // the rows each worker's transactions inserted less deleted
  mutable std::vector<Redraw> redraw_;  // one per worker; only that worker touches its entry
};

}  // namespace abyss
