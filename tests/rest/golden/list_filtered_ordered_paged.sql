select (coalesce(json_agg("t4".j
  order by "t4".__n) filter (where "t4".__n <= %(p0)s::bigint), '[]'::json))::text, (count(*) filter (where "t4".__n <= %(p0)s::bigint))::text, (count(*) > %(p0)s::bigint)::text, (false)::text, ((array_agg("t4".c
  order by "t4".__n) filter (where "t4".__n <= %(p0)s::bigint))[1])::text, ((array_agg("t4".c
  order by "t4".__n desc) filter (where "t4".__n <= %(p0)s::bigint))[1])::text, ((select count(*) from "app_public"."books" "t5"
  where (("t5"."genre" = %(p1)s::app_public.genre) and ("t5"."pages" > %(p2)s::integer) and exists (select from "app_public"."authors" "t6"
  where "t6"."id" = "t5"."author_id" and ("t6"."name" ilike %(p3)s::text))))::int)::text
  from (select json_build_object('id', "t1"."id", 'title', "t1"."title", 'pages', "t1"."pages", 'price', "t1"."price"::text) as j, translate(encode(convert_to(json_build_array('Book:PAGES_DESC,TITLE_ASC', "t1"."__o1", "t1"."__o2", "t1"."__o3")::text, 'UTF8'), 'base64'), E'\n', '') as c, row_number() over (order by "t1"."__o1" desc nulls first, "t1"."__o2" asc nulls last, "t1"."__o3" asc nulls last) as __n, count(*) over () as __c
  from (select "t2"."id", "t2"."title", "t2"."pages", "t2"."price", "t2"."pages" as "__o1", "t2"."title" as "__o2", "t2"."id" as "__o3" from "app_public"."books" "t2"
  where (("t2"."genre" = %(p1)s::app_public.genre) and ("t2"."pages" > %(p2)s::integer) and exists (select from "app_public"."authors" "t3"
  where "t3"."id" = "t2"."author_id" and ("t3"."name" ilike %(p3)s::text)))
  order by "t2"."pages" desc nulls first, "t2"."title" asc nulls last, "t2"."id" asc nulls last
  limit %(p0)s::bigint + 1) "t1") "t4"
  group by ()
