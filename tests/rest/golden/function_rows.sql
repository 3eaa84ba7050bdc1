select (coalesce(json_agg("t3".j
  order by "t3".__n) filter (where "t3".__n <= %(p1)s::bigint), '[]'::json))::text, (count(*) filter (where "t3".__n <= %(p1)s::bigint))::text, (count(*) > %(p1)s::bigint)::text, (false)::text, ((array_agg("t3".c
  order by "t3".__n) filter (where "t3".__n <= %(p1)s::bigint))[1])::text, ((array_agg("t3".c
  order by "t3".__n desc) filter (where "t3".__n <= %(p1)s::bigint))[1])::text
  from (select json_build_object('id', "t1"."id", 'title', "t1"."title", 'pages', "t1"."pages") as j, translate(encode(convert_to(json_build_array('Book:PAGES_DESC', "t1"."__o1", "t1"."__o2")::text, 'UTF8'), 'base64'), E'\n', '') as c, row_number() over (order by "t1"."__o1" desc nulls first, "t1"."__o2" asc nulls last) as __n, count(*) over () as __c
  from (select "t2".*, "t2"."pages" as "__o1", "t2"."id" as "__o2" from "app_public"."books_by_genre"("wanted" => %(p0)s::app_public.genre) "t2"
  where ("t2"."pages" < %(p2)s::integer)
  order by "t2"."pages" desc nulls first, "t2"."id" asc nulls last
  limit %(p1)s::bigint + 1) "t1") "t3"
  group by ()
