select (coalesce(json_agg("t13".j
  order by "t13".__n) filter (where "t13".__n <= %(p0)s::bigint), '[]'::json))::text, (count(*) filter (where "t13".__n <= %(p0)s::bigint))::text, (count(*) > %(p0)s::bigint)::text, (false)::text, ((array_agg("t13".c
  order by "t13".__n) filter (where "t13".__n <= %(p0)s::bigint))[1])::text, ((array_agg("t13".c
  order by "t13".__n desc) filter (where "t13".__n <= %(p0)s::bigint))[1])::text
  from (select json_build_object('id', "t1"."id", 'name', "t1"."name", 'books', "t12".j) as j, translate(encode(convert_to(json_build_array('Author:NAME_ASC', "t1"."__o1", "t1"."__o2")::text, 'UTF8'), 'base64'), E'\n', '') as c, row_number() over (order by "t1"."__o1" asc nulls last, "t1"."__o2" asc nulls last) as __n, count(*) over () as __c
  from (select "t2"."id", "t2"."name", "t2"."name" as "__o1", "t2"."id" as "__o2" from "app_public"."authors" "t2"
  where exists (select from "app_public"."books" "t3"
  where "t3"."author_id" = "t2"."id" and ("t3"."pages" > %(p1)s::integer))
  order by "t2"."name" asc nulls last, "t2"."id" asc nulls last
  limit %(p0)s::bigint + 1) "t1"
  left join lateral (select (select coalesce(json_agg("t11".j), '[]'::json)
  from (select json_build_object('id', "t4"."id", 'title', "t4"."title", 'pages', "t4"."pages", 'shelves', "t10".j) as j
  from (select "t5"."id", "t5"."title", "t5"."pages", "t5"."pages" as "__o1", "t5"."id" as "__o2" from "app_public"."books" "t5"
  where "t5"."author_id" = "t1"."id" and ("t5"."pages" > %(p3)s::integer)
  order by "t5"."pages" desc nulls first, "t5"."id" asc nulls last
  limit %(p2)s::bigint) "t4"
  left join lateral (select (select coalesce(json_agg("t9".j), '[]'::json)
  from (select json_build_object('label', "t6"."label") as j
  from (select "t7"."label" from "app_public"."shelves" "t7" join "app_public"."book_shelves" "t8" on "t7"."id" = "t8"."shelf_id"
  where "t8"."book_id" = "t4"."id"
  limit %(p4)s::bigint) "t6") "t9") as j) "t10" on true
  order by "t4"."__o1" desc nulls first, "t4"."__o2" asc nulls last) "t11") as j) "t12" on true) "t13"
  group by ()
