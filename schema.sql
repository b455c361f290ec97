-- memlane schema, version 1 (the baseline). Later changes are append-only migrations in
-- memory.py's MIGRATIONS, keyed by PRAGMA user_version. Never edit this after it shipped;
-- add a migration instead. `{dim}` is replaced by the embedder's dimension when applied.
-- Times are ISO-8601 UTC strings of one fixed width, so they compare as text.

create table if not exists meta (
    key text primary key,
    value text not null
);

-- One row per version of a memory. Nothing is deleted: a forget or an update closes the row
-- (valid_until) and an update links the new row to it through previous_id.
create table if not exists chunks (
    seq integer primary key,              -- stable integer key for vec0 and FTS5 rowids
    id text not null unique,              -- the opaque id clients see
    namespace text not null,
    content text not null,
    content_hash text not null,           -- sha256 of the normalized content, for duplicates
    source text,
    importance real not null default 0.5,
    tags text not null default '[]',      -- JSON array of strings
    metadata text not null default '{}',  -- JSON object
    lang text not null default 'en',      -- 'en' or 'zh', detected from the content
    kind text not null default 'memory',  -- 'memory' (what a user stored) or 'fact' (derived)
    parent_id text references chunks(id), -- for a fact: the memory it was derived from
    created_at text not null,
    valid_from text not null,
    valid_until text,                     -- null while live
    previous_id text references chunks(id),
    superseded_by text references chunks(id), -- a newer memory stating the same fact with a new value
    forgotten_reason text
);
create index if not exists chunks_ns_live on chunks(namespace, valid_until);
create index if not exists chunks_hash on chunks(namespace, content_hash) where valid_until is null;
create index if not exists chunks_previous on chunks(previous_id);
create index if not exists chunks_parent on chunks(parent_id);
create index if not exists chunks_ns_created on chunks(namespace, created_at);

-- English and general text: porter stemming, BM25. External content: rows live in chunks.
create virtual table if not exists chunks_fts using fts5(
    content, tags, source, metadata,
    content='chunks', content_rowid='seq',
    tokenize='porter unicode61 remove_diacritics 2'
);
-- Chinese and other unsegmented text: trigrams for words of 3+ characters.
create virtual table if not exists chunks_tri using fts5(
    content,
    content='chunks', content_rowid='seq',
    tokenize='trigram'
);
-- 2-character Chinese words (柏林, 茅台): every adjacent CJK pair of a chunk as an ASCII token
-- (search_index.cjk_bigrams), so the meta lane finds them through an index, not a LIKE scan.
create virtual table if not exists chunks_bi using fts5(
    bigrams,
    content='', tokenize='ascii', detail='none', columnsize=0
);

create table if not exists entities (
    id text primary key,
    namespace text not null,
    name text not null,
    norm text not null,                   -- entity_resolve.norm(name)
    kind text not null default 'concept',
    created_at text not null,
    unique (namespace, norm)
);

-- Every name an entity answers to, its own name included, normalized for lookup.
create table if not exists entity_aliases (
    namespace text not null,
    norm text not null,
    alias text not null,
    entity_id text not null references entities(id),
    primary key (namespace, norm)
) without rowid;
create index if not exists entity_aliases_entity on entity_aliases(entity_id);

create table if not exists chunk_entities (
    chunk_seq integer not null references chunks(seq),
    entity_id text not null references entities(id),
    primary key (chunk_seq, entity_id)
) without rowid;
create index if not exists chunk_entities_entity on chunk_entities(entity_id, chunk_seq);

create table if not exists relations (
    id text primary key,
    namespace text not null,
    subject_id text not null references entities(id),
    predicate text not null,
    object_id text not null references entities(id),
    confidence real not null default 1.0,
    chunk_id text references chunks(id),  -- the evidence
    created_at text not null,
    valid_from text not null,
    valid_until text,
    forgotten_reason text
);
create index if not exists relations_subject on relations(subject_id, valid_until);
create index if not exists relations_object on relations(object_id, valid_until);
create index if not exists relations_chunk on relations(chunk_id);
create index if not exists relations_ns on relations(namespace, valid_until);

-- Vectors, one per chunk version (closed versions keep theirs for as_of recall). The namespace
-- is a partition key, so a KNN never crosses namespaces; live and lang filter inside the KNN.
create virtual table if not exists chunk_vec using vec0(
    namespace text partition key,
    live integer,
    lang text,
    embedding float[{dim}] distance_metric=cosine
);
-- Every vector again as float32: what the approximate index (store/ann.py) is built and rebuilt from.
create table if not exists chunk_vec_f32 (
    seq integer primary key references chunks(seq),
    embedding blob not null               -- float32, L2-normalized
);

-- Durable embedding queue: a chunk is here from the transaction that stored it until its vector
-- is written. The worker resumes it after a restart or crash.
create table if not exists embed_queue (
    chunk_seq integer primary key references chunks(seq),
    enqueued_at text not null,
    attempts integer not null default 0,
    last_error text
);

create table if not exists recall_log (
    id integer primary key,
    namespace text not null,
    query text not null,
    created_at text not null,
    took_ms real not null,
    lanes_json text not null,             -- {lane: {hits, ms}}
    lane_wall_ms real,                    -- wall time of the concurrent lanes
    hit_count integer not null,
    skipped text,                         -- 'placeholder' when the query was not run
    recall_details_json text not null     -- top 5 hits: chunk_id, score, ranks, lane scores
);
create index if not exists recall_log_created on recall_log(created_at);
