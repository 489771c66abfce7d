-- claude-mem v13.15.3's schema after its migrations (src/services/sqlite/
-- SessionStore.ts: initializeSchema, then the migrations up to 49), the
-- tables Mnemo reads; FTS tables, pending_messages and the sync tables
-- are left out.
PRAGMA journal_mode = WAL;
CREATE TABLE schema_versions (
  id INTEGER PRIMARY KEY,
  version INTEGER UNIQUE NOT NULL,
  applied_at TEXT NOT NULL
);
CREATE TABLE sdk_sessions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  content_session_id TEXT NOT NULL,
  memory_session_id TEXT UNIQUE,
  project TEXT NOT NULL,
  platform_source TEXT NOT NULL DEFAULT 'claude',
  user_prompt TEXT,
  started_at TEXT NOT NULL,
  started_at_epoch INTEGER NOT NULL,
  completed_at TEXT,
  completed_at_epoch INTEGER,
  status TEXT NOT NULL DEFAULT 'active' CHECK(status IN ('active', 'completed', 'failed')),
  worker_port INTEGER,
  prompt_counter INTEGER DEFAULT 0,
  custom_title TEXT
);
CREATE INDEX idx_sdk_sessions_claude_id ON sdk_sessions(content_session_id);
CREATE UNIQUE INDEX idx_sdk_sessions_platform_content ON sdk_sessions(platform_source, content_session_id);
CREATE TABLE observations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  memory_session_id TEXT NOT NULL,
  project TEXT NOT NULL,
  text TEXT,
  type TEXT NOT NULL,
  title TEXT,
  subtitle TEXT,
  facts TEXT,
  narrative TEXT,
  concepts TEXT,
  files_read TEXT,
  files_modified TEXT,
  prompt_number INTEGER,
  discovery_tokens INTEGER DEFAULT 0,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  content_hash TEXT,
  generated_by_model TEXT,
  relevance_count INTEGER DEFAULT 0,
  merged_into_project TEXT,
  agent_type TEXT,
  agent_id TEXT,
  metadata TEXT,
  synced_at INTEGER,
  origin_device_id TEXT,
  origin_local_id TEXT,
  sync_rev TEXT NOT NULL DEFAULT '1',
  FOREIGN KEY(memory_session_id) REFERENCES sdk_sessions(memory_session_id) ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX idx_observations_session_hash ON observations(memory_session_id, content_hash);
CREATE INDEX idx_observations_project ON observations(project);
CREATE INDEX idx_observations_created ON observations(created_at_epoch DESC);
CREATE TABLE session_summaries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  memory_session_id TEXT NOT NULL,
  project TEXT NOT NULL,
  request TEXT,
  investigated TEXT,
  learned TEXT,
  completed TEXT,
  next_steps TEXT,
  files_read TEXT,
  files_edited TEXT,
  notes TEXT,
  prompt_number INTEGER,
  discovery_tokens INTEGER DEFAULT 0,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  merged_into_project TEXT,
  synced_at INTEGER,
  origin_device_id TEXT,
  origin_local_id TEXT,
  sync_rev TEXT NOT NULL DEFAULT '1',
  FOREIGN KEY(memory_session_id) REFERENCES sdk_sessions(memory_session_id) ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX idx_session_summaries_sdk_session ON session_summaries(memory_session_id);
CREATE TABLE user_prompts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_db_id INTEGER,
  content_session_id TEXT NOT NULL,
  prompt_number INTEGER NOT NULL,
  prompt_text TEXT NOT NULL,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  synced_at INTEGER,
  origin_device_id TEXT,
  origin_local_id TEXT,
  sync_rev TEXT NOT NULL DEFAULT '1',
  FOREIGN KEY(session_db_id) REFERENCES sdk_sessions(id) ON DELETE CASCADE
);
CREATE INDEX idx_user_prompts_session_number ON user_prompts(session_db_id, prompt_number);
INSERT INTO schema_versions (version, applied_at) VALUES
  (4, '2026-01-10T08:00:00.000Z'), (5, '2026-01-10T08:00:00.000Z'), (6, '2026-01-10T08:00:00.000Z'),
  (7, '2026-01-10T08:00:00.000Z'), (8, '2026-01-10T08:00:00.000Z'), (9, '2026-01-10T08:00:00.000Z'),
  (10, '2026-01-10T08:00:00.000Z'), (11, '2026-01-10T08:00:00.000Z'), (16, '2026-01-10T08:00:00.000Z'),
  (17, '2026-01-10T08:00:00.000Z'), (20, '2026-01-10T08:00:00.000Z'), (21, '2026-01-10T08:00:00.000Z'),
  (22, '2026-01-10T08:00:00.000Z'), (23, '2026-01-10T08:00:00.000Z'), (24, '2026-01-10T08:00:00.000Z'),
  (26, '2026-01-10T08:00:00.000Z'), (27, '2026-01-10T08:00:00.000Z'), (28, '2026-01-10T08:00:00.000Z'),
  (29, '2026-01-10T08:00:00.000Z'), (30, '2026-01-10T08:00:00.000Z'), (31, '2026-01-10T08:00:00.000Z'),
  (32, '2026-01-10T08:00:00.000Z'), (33, '2026-01-10T08:00:00.000Z'), (34, '2026-01-10T08:00:00.000Z'),
  (35, '2026-01-10T08:00:00.000Z'), (39, '2026-01-10T08:00:00.000Z'), (41, '2026-01-10T08:00:00.000Z'),
  (42, '2026-01-10T08:00:00.000Z'), (44, '2026-01-10T08:00:00.000Z'), (45, '2026-01-10T08:00:00.000Z'),
  (46, '2026-01-10T08:00:00.000Z'), (47, '2026-01-10T08:00:00.000Z'), (48, '2026-01-10T08:00:00.000Z'),
  (49, '2026-01-10T08:00:00.000Z');
