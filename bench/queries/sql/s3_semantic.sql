-- S3 semantic search on bench_vectors (the embedded PostgreSQL with pgvector): the items nearest to a vector by
-- cosine distance, read in distance order through the hnsw index (vector_cosine_ops), ties by item_id, score
-- 1 - distance, first 10, hasMore (11 rows read). The vector is topic 7's centre plus noise (bench/run.py
-- vector_rows), to 3 places: its nearest items are topic 7's.
with q as (
  select '[-0.534,1.500,2.350,1.168,0.520,-0.625,-1.897,-2.090,-0.295,0.243,1.727,-0.081,-0.428,0.136,1.340,-0.305,1.439,2.564,1.039,0.410,0.932,1.645,-0.877,0.405,-0.755,1.108,1.928,-1.195,0.098,0.811,0.389,1.300]'::vector as v),
page as (
  select i.item_id, i.topic, 1 - (i.embedding <=> q.v) as score,
         row_number() over (order by i.embedding <=> q.v, i.item_id) as rn
  from public.item i, q
  order by i.embedding <=> q.v, i.item_id
  limit 11)
select json_build_object('data', json_build_object('itemsSemanticSearch', json_build_object(
  'hits', coalesce((select json_agg(json_build_object('score', p.score,
      'node', json_build_object('itemId', p.item_id, 'topic', p.topic)) order by p.rn)
    from page p where p.rn <= 10), '[]'::json),
  'hasMore', (select count(*) > 10 from page))));
