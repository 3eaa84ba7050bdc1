-- The demo schema `svc demo` serves: a small blog with people, posts, tags, threaded comments, a view and
-- functions, so every kind of thing the service derives from a catalog shows up in the generated APIs.
create schema app_public;
comment on schema app_public is 'The demo blog served by `svc demo`.';

create type app_public.post_status as enum ('draft', 'published', 'archived');

create table app_public.people (
  id integer generated always as identity primary key,
  username varchar(40) not null unique check (username ~ '^[a-z0-9_]+$'),
  display_name text not null,
  bio text,
  created_at timestamptz not null default now()
);
comment on table app_public.people is 'Someone who writes posts and comments.';
create extension if not exists pg_trgm;
create index people_display_name_trgm_idx on app_public.people using gin (display_name gin_trgm_ops);
comment on column app_public.people.username is 'Unique handle: lower-case letters, digits and underscores.';

create table app_public.posts (
  id integer generated always as identity primary key,
  author_id integer not null references app_public.people (id) on delete cascade,
  title varchar(200) not null,
  body text not null default '',
  status app_public.post_status not null default 'draft',
  published_at timestamptz,
  created_at timestamptz not null default now(),
  constraint posts_published_at_check check (status <> 'published' or published_at is not null)
);
create index on app_public.posts (author_id);
-- Search (SPEC "Search fields"): a full-text document kept by PostgreSQL gives postsFullTextSearch (with highlights:
-- its text is the title and body), a trigram index on people's names gives peopleFuzzySearch, and both globalSearch.
alter table app_public.posts add column search_document tsvector
  generated always as (to_tsvector('english', title || ' ' || body)) stored;
create index posts_search_document_idx on app_public.posts using gin (search_document);
comment on table app_public.posts is 'A blog post; published posts have a publication time.';

create table app_public.tags (
  id integer generated always as identity primary key,
  name text not null unique
);

-- A junction table: posts and tags are related many-to-many through it.
create table app_public.post_tags (
  post_id integer not null references app_public.posts (id) on delete cascade,
  tag_id integer not null references app_public.tags (id) on delete cascade,
  primary key (post_id, tag_id)
);
create index on app_public.post_tags (tag_id);

-- Comments reply to a post and, when threaded, to another comment (a self-reference: a hierarchy).
create table app_public.comments (
  id integer generated always as identity primary key,
  post_id integer not null references app_public.posts (id) on delete cascade,
  author_id integer not null references app_public.people (id) on delete cascade,
  parent_id integer references app_public.comments (id) on delete cascade,
  body text not null check (length(body) between 1 and 2000),
  created_at timestamptz not null default now()
);
create index on app_public.comments (post_id);
create index on app_public.comments (parent_id);

create view app_public.published_posts as
  select id, author_id, title, body, published_at from app_public.posts where status = 'published';
comment on view app_public.published_posts is 'Posts readers can see.';

-- A computed field of posts (its first argument is the row) with an argument of its own.
create function app_public.posts_excerpt(post app_public.posts, length integer default 80) returns text
  language sql stable
  as $$ select case when char_length(post.body) > length then left(post.body, length) || '…' else post.body end $$;

-- A STABLE set-returning function: a query root field.
create function app_public.search_posts(query text) returns setof app_public.posts
  language sql stable
  as $$ select * from app_public.posts where title ilike '%' || query || '%' or body ilike '%' || query || '%' $$;

-- A VOLATILE function: a mutation.
create function app_public.publish_post(post_id integer) returns app_public.posts
  language sql volatile
  as $$
    update app_public.posts set status = 'published', published_at = coalesce(published_at, now())
    where id = post_id returning *
  $$;

insert into app_public.people (username, display_name, bio) values
  ('ada', 'Ada Lovelace', 'Wrote the first published program.'),
  ('grace', 'Grace Hopper', 'Built the first compiler.'),
  ('edsger', 'Edsger Dijkstra', null);

insert into app_public.posts (author_id, title, body, status, published_at) values
  (1, 'Notes on the Analytical Engine', 'The engine weaves algebraic patterns just as the Jacquard loom weaves flowers and leaves.', 'published', '1843-09-01'),
  (2, 'Compilers for everyone', 'Programs should be written in something closer to English.', 'published', '1952-05-01'),
  (3, 'Go To Statement Considered Harmful', 'The quality of programmers is a decreasing function of the density of go to statements.', 'published', '1968-03-01'),
  (3, 'On the cruelty of really teaching computing science', 'A draft.', 'draft', null);

insert into app_public.tags (name) values ('history'), ('languages'), ('essays');
insert into app_public.post_tags (post_id, tag_id) values (1, 1), (2, 1), (2, 2), (3, 2), (3, 3), (4, 3);

insert into app_public.comments (post_id, author_id, parent_id, body) values
  (1, 2, null, 'A machine that composes music, then.'),
  (1, 1, 1, 'In principle, yes.'),
  (3, 2, null, 'Strong words.'),
  (3, 3, 3, 'Deliberately so.');
