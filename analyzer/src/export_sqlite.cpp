// SQLite export: the analysis' tables plus every event of the range, so a
// user can ask questions the report does not answer, in SQL. The schema is
// documented in docs/analyzer.md.
#include <sqlite3.h>

#include <cstdio>

#include "memtrail/export.hpp"
#include "memtrail/trace_file.hpp"

namespace memtrail {

namespace {

const char* const kSchema = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE pools(id INTEGER PRIMARY KEY, name TEXT, kind TEXT, space TEXT, device INTEGER,
  parent TEXT, allocations INTEGER, reuses INTEGER, frees INTEGER, segment_reserves INTEGER,
  peak_used_bytes INTEGER, peak_reserved_bytes INTEGER, final_used_bytes INTEGER,
  final_reserved_bytes INTEGER, leaked_bytes INTEGER, leaked_blocks INTEGER, reuse_ratio REAL);
CREATE TABLE threads(id INTEGER PRIMARY KEY, tid INTEGER, name TEXT);
CREATE TABLE modules(id INTEGER PRIMARY KEY, path TEXT, load_address INTEGER, start INTEGER,
  "end" INTEGER, build_id TEXT);
CREATE TABLE stack_nodes(id INTEGER PRIMARY KEY, parent INTEGER, ip INTEGER);
CREATE TABLE sites(id INTEGER PRIMARY KEY, pool INTEGER, stack INTEGER, calls INTEGER,
  reuses INTEGER, bytes_allocated INTEGER, temporaries INTEGER, peak_bytes INTEGER,
  leaked_bytes INTEGER, leaked_blocks INTEGER, direct_bytes INTEGER, indirect_bytes INTEGER,
  reachable_bytes INTEGER, live_at_range_end_bytes INTEGER);
CREATE TABLE frames(site INTEGER, depth INTEGER, function TEXT, file TEXT, line INTEGER,
  module TEXT, address INTEGER, inlined INTEGER, PRIMARY KEY(site, depth));
CREATE TABLE scopes(id INTEGER PRIMARY KEY, name TEXT, kind TEXT, pool TEXT, entries INTEGER,
  bytes_escaped INTEGER, growth_per_entry_bytes REAL, live_bytes_at_end INTEGER);
CREATE TABLE marks(time_ns INTEGER, thread INTEGER, text TEXT);
CREATE TABLE events(seq INTEGER PRIMARY KEY, time_ns INTEGER, thread INTEGER, kind TEXT,
  pool INTEGER, address INTEGER, size INTEGER, requested INTEGER, stack INTEGER, detail INTEGER,
  aux INTEGER);
CREATE VIEW leaks AS SELECT s.id AS site, p.name AS pool, s.leaked_bytes, s.leaked_blocks,
  f.function, f.file, f.line FROM sites s JOIN pools p ON p.id = s.pool
  LEFT JOIN frames f ON f.site = s.id AND f.depth = 0 WHERE s.leaked_blocks > 0;
)sql";

// Thin RAII over one prepared statement.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { sqlite3_prepare_v2(db, sql, -1, &s_, nullptr); }
  ~Stmt() { sqlite3_finalize(s_); }
  bool ok() const { return s_ != nullptr; }
  Stmt& i(int col, std::uint64_t v) {
    // SQLite integers are signed 64-bit; addresses above 2^63 wrap (documented).
    sqlite3_bind_int64(s_, col, static_cast<sqlite3_int64>(v));
    return *this;
  }
  Stmt& d(int col, double v) {
    sqlite3_bind_double(s_, col, v);
    return *this;
  }
  Stmt& t(int col, const std::string& v) {
    sqlite3_bind_text(s_, col, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  bool run() {
    int rc = sqlite3_step(s_);
    sqlite3_reset(s_);
    return rc == SQLITE_DONE;
  }

 private:
  sqlite3_stmt* s_ = nullptr;
};

class EventInserter : public TraceVisitor {
 public:
  EventInserter(sqlite3* db, std::uint64_t from, std::uint64_t to)
      : stmt_(db, "INSERT INTO events VALUES(?,?,?,?,?,?,?,?,?,?,?)"), from_(from), to_(to) {}
  void on_event(const Event& e) override {
    if (e.time_ns < from_ || e.time_ns > to_) return;
    stmt_.i(1, seq_++)
        .i(2, e.time_ns)
        .i(3, e.thread)
        .t(4, std::string(to_string(e.kind)))
        .i(5, e.pool);
    stmt_.i(6, e.address).i(7, e.size).i(8, e.requested).i(9, e.stack).i(10, e.detail).i(11, e.aux);
    ok_ = stmt_.run() && ok_;
  }
  bool keep_going() override { return ok_; }
  bool ok() const { return ok_ && stmt_.ok(); }

 private:
  Stmt stmt_;
  std::uint64_t from_, to_;
  std::uint64_t seq_ = 1;
  bool ok_ = true;
};

// What the trace is and which range the tables cover.
bool insert_meta(sqlite3* db, const Analysis& a) {
  bool ok = true;
  Stmt meta(db, "INSERT INTO meta VALUES(?,?)");
  auto kv = [&](const char* k, const std::string& v) { ok = meta.t(1, k).t(2, v).run() && ok; };
  kv("schema", "memtrail.sqlite/1");
  kv("trace", a.path);
  kv("command_line", a.header.command_line);
  kv("pid", std::to_string(a.header.pid));
  kv("range_from_ns", std::to_string(a.range_from_ns));
  kv("range_to_ns", a.range_to_ns == kTimeMax ? "" : std::to_string(a.range_to_ns));
  return ok;
}

bool insert_pools(sqlite3* db, const Analysis& a) {
  bool ok = true;
  Stmt pool(db, "INSERT INTO pools VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  for (const PoolStats& p : a.pools) {
    pool.i(1, p.info.id).t(2, p.info.name).t(3, std::string(to_string(p.info.kind)));
    pool.t(4, std::string(to_string(p.info.space))).i(5, static_cast<std::uint64_t>(p.info.device));
    pool.t(6, p.parent_name)
        .i(7, p.allocations)
        .i(8, p.reuses)
        .i(9, p.frees)
        .i(10, p.segment_reserves);
    pool.i(11, p.peak_used_bytes).i(12, p.peak_reserved_bytes).i(13, p.final_used_bytes);
    pool.i(14, p.final_reserved_bytes)
        .i(15, p.leaked.bytes)
        .i(16, p.leaked.blocks)
        .d(17, p.reuse_ratio);
    ok = pool.run() && ok;
  }
  return ok;
}

// The trace's tables: threads, modules, stack nodes.
bool insert_trace_tables(sqlite3* db, const Analysis& a) {
  bool ok = true;
  Stmt thread(db, "INSERT OR REPLACE INTO threads VALUES(?,?,?)");
  for (const ThreadInfo& t : a.threads)
    if (t.id) ok = thread.i(1, t.id).i(2, t.tid).t(3, t.name).run() && ok;
  Stmt module(db, "INSERT OR REPLACE INTO modules VALUES(?,?,?,?,?,?)");
  for (const ModuleInfo& m : a.modules)
    ok = module.i(1, m.id)
             .t(2, m.path)
             .i(3, m.load_address)
             .i(4, m.start)
             .i(5, m.end)
             .t(6, m.build_id)
             .run() &&
         ok;
  Stmt node(db, "INSERT OR REPLACE INTO stack_nodes VALUES(?,?,?)");
  for (const StackNode& n : a.stack_nodes)
    if (n.id) ok = node.i(1, n.id).i(2, n.parent).i(3, n.ip).run() && ok;
  return ok;
}

// Each site with its symbolized frames.
bool insert_sites(sqlite3* db, const Analysis& a) {
  bool ok = true;
  Stmt site(db, "INSERT INTO sites VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  Stmt frame(db, "INSERT INTO frames VALUES(?,?,?,?,?,?,?,?)");
  for (std::uint32_t i = 0; i < a.sites.size(); ++i) {
    const Site& s = a.sites[i];
    site.i(1, i)
        .i(2, s.pool.value)
        .i(3, s.stack.value)
        .i(4, s.calls)
        .i(5, s.reuses)
        .i(6, s.bytes_allocated);
    site.i(7, s.temporaries).i(8, s.peak_bytes).i(9, s.leaked.bytes).i(10, s.leaked.blocks);
    site.i(11, s.direct.bytes)
        .i(12, s.indirect.bytes)
        .i(13, s.reachable.bytes)
        .i(14, s.live_at_range_end.bytes);
    ok = site.run() && ok;
    for (std::size_t d = 0; d < s.frames.size(); ++d) {
      const Frame& f = s.frames[d];
      frame.i(1, i)
          .i(2, d)
          .t(3, f.function)
          .t(4, f.file)
          .i(5, f.line)
          .t(6, f.module)
          .i(7, f.address);
      ok = frame.i(8, f.inlined).run() && ok;
    }
  }
  return ok;
}

bool insert_scopes_and_marks(sqlite3* db, const Analysis& a) {
  bool ok = true;
  Stmt scope(db, "INSERT OR REPLACE INTO scopes VALUES(?,?,?,?,?,?,?,?)");
  for (const ScopeStats& s : a.scopes) {
    scope.i(1, s.info.id)
        .t(2, s.info.name)
        .t(3, std::string(to_string(s.info.kind)))
        .t(4, s.pool_name);
    ok = scope.i(5, s.entries)
             .i(6, s.bytes_escaped)
             .d(7, s.growth_per_entry_bytes)
             .i(8, s.live_bytes_at_end)
             .run() &&
         ok;
  }
  Stmt mark(db, "INSERT INTO marks VALUES(?,?,?)");
  for (const Mark& m : a.marks) ok = mark.i(1, m.time_ns).i(2, m.thread).t(3, m.text).run() && ok;
  return ok;
}

// Every table but events; false when a row could not be inserted.
bool insert_analysis(sqlite3* db, const Analysis& a) {
  bool ok = insert_meta(db, a);
  ok = insert_pools(db, a) && ok;
  ok = insert_trace_tables(db, a) && ok;
  ok = insert_sites(db, a) && ok;
  return insert_scopes_and_marks(db, a) && ok;
}

}  // namespace

std::string write_sqlite(const Analysis& a, const std::string& db_path) {
  std::remove(db_path.c_str());  // a fresh database, not rows appended to an old one
  sqlite3* db = nullptr;
  if (sqlite3_open(db_path.c_str(), &db) != SQLITE_OK) {
    std::string err =
        db_path + ": cannot create database (" + (db ? sqlite3_errmsg(db) : "out of memory") + ")";
    sqlite3_close(db);
    return err;
  }
  auto fail = [&](const std::string& what) {
    std::string err = db_path + ": " + what + " (" + sqlite3_errmsg(db) + ")";
    sqlite3_close(db);
    return err;
  };
  sqlite3_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;", nullptr, nullptr, nullptr);
  if (sqlite3_exec(db, kSchema, nullptr, nullptr, nullptr) != SQLITE_OK)
    return fail("cannot create schema");
  if (sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr) != SQLITE_OK)
    return fail("cannot begin");
  bool ok = insert_analysis(db, a);
  if (!ok) return fail("cannot insert the analysis tables");
  {
    TraceReader reader(a.path);
    EventInserter events(db, a.range_from_ns, a.range_to_ns);
    ReadResult r = reader.read(events);
    if (!events.ok()) return fail("cannot insert events");
    if (!r.ok && !a.options.allow_partial) {
      sqlite3_close(db);
      return r.error;
    }
  }
  if (sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK)
    return fail("cannot commit");
  if (sqlite3_close(db) != SQLITE_OK) return db_path + ": cannot close database";
  return {};
}

}  // namespace memtrail
