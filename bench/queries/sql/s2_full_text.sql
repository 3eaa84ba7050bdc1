-- S2 full-text search: films whose pagila `fulltext` (tsvector kept by its trigger with pg_catalog.english; gist
-- index) matches websearch_to_tsquery('pg_catalog.english', 'crocodile boat'), score ts_rank, best first, ties by
-- film_id, first 10, hasMore (11 rows read).
with page as (
  select f.film_id, f.title,
         ts_rank(f.fulltext, websearch_to_tsquery('pg_catalog.english', 'crocodile boat')) as score,
         row_number() over (
           order by ts_rank(f.fulltext, websearch_to_tsquery('pg_catalog.english', 'crocodile boat')) desc, f.film_id
         ) as rn
  from public.film f
  where f.fulltext @@ websearch_to_tsquery('pg_catalog.english', 'crocodile boat')
  order by score desc, f.film_id
  limit 11)
select json_build_object('data', json_build_object('filmsFullTextSearch', json_build_object(
  'hits', coalesce((select json_agg(json_build_object('score', p.score,
      'node', json_build_object('filmId', p.film_id, 'title', p.title)) order by p.rn)
    from page p where p.rn <= 10), '[]'::json),
  'hasMore', (select count(*) > 10 from page))));
