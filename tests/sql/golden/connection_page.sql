select (select (select json_build_object('totalCount', (select count(*) from "app_public"."books" "t4"
  where ("t4"."genre" = %(p0)s::app_public.genre))::int, 'pageInfo', json_build_object('hasNextPage', count(*) > %(p1)s::bigint, 'hasPreviousPage', false, 'startCursor', (array_agg("t3".c
  order by "t3".__n) filter (where "t3".__n <= %(p1)s::bigint))[1], 'endCursor', (array_agg("t3".c
  order by "t3".__n desc) filter (where "t3".__n <= %(p1)s::bigint))[1]), 'edges', coalesce(json_agg(json_build_object('cursor', "t3".c, 'node', "t3".j)
  order by "t3".__n) filter (where "t3".__n <= %(p1)s::bigint), '[]'::json))
  from (select json_build_object('id', translate(encode(convert_to('Book:' || "t1"."id"::text, 'UTF8'), 'base64'), E'\n', ''), 'title', "t1"."title", 'price', "t1"."price"::text) as j, translate(encode(convert_to(json_build_array('Book:PRICE_DESC', "t1"."__o1", "t1"."__o2")::text, 'UTF8'), 'base64'), E'\n', '') as c, row_number() over (order by "t1"."__o1" desc nulls first, "t1"."__o2" asc nulls last) as __n, count(*) over () as __c
  from (select "t2"."id", "t2"."title", "t2"."price", "t2"."price" as "__o1", "t2"."id" as "__o2" from "app_public"."books" "t2"
  where ("t2"."genre" = %(p0)s::app_public.genre)
  order by "t2"."price" desc nulls first, "t2"."id" asc nulls last
  limit %(p1)s::bigint + 1) "t1") "t3"
  group by ()))::text
