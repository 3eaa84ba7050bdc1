-- S1 fuzzy search: films whose title matches 'coma' by trigram word similarity (pg_trgm's `<%`, at the default
-- pg_trgm.word_similarity_threshold 0.6: the gin trigram index bench/run.py adds on film.title), score
-- word_similarity(query, title), best first, ties by film_id, first 10, hasMore (11 rows read).
with page as (
  select f.film_id, f.title, word_similarity('coma', f.title) as score,
         row_number() over (order by word_similarity('coma', f.title) desc, f.film_id) as rn
  from public.film f
  where 'coma' <% f.title
  order by score desc, f.film_id
  limit 11)
select json_build_object('data', json_build_object('filmsFuzzySearch', json_build_object(
  'hits', coalesce((select json_agg(json_build_object('score', p.score,
      'node', json_build_object('filmId', p.film_id, 'title', p.title)) order by p.rn)
    from page p where p.rn <= 10), '[]'::json),
  'hasMore', (select count(*) > 10 from page))));
