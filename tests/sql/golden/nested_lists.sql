select (select (select coalesce(json_agg("t15".j), '[]'::json)
  from (select json_build_object('name', "t1"."name", 'mentor', "t5".j, 'books', "t14".j) as j
  from (select "t2"."name", "t2"."mentor_id", "t2"."id", "t2"."name" as "__o1", "t2"."id" as "__o2" from "app_public"."authors" "t2"
  order by "t2"."name" asc nulls last, "t2"."id" asc nulls last
  limit %(p0)s::bigint) "t1"
  left join lateral (select (select json_build_object('name', "t3"."name")
  from (select "t4"."name" from "app_public"."authors" "t4"
  where "t4"."id" = "t1"."mentor_id") "t3"
  limit 1) as j) "t5" on true
  left join lateral (select (select coalesce(json_agg("t13".j), '[]'::json)
  from (select json_build_object('title', "t6"."title", 'genre', (case "t6"."genre"::text when 'fiction' then 'FICTION' when 'non-fiction' then 'NON_FICTION' when 'poetry' then 'POETRY' else "t6"."genre"::text end), 'price', "t6"."price"::text, 'shelves', "t12".j) as j
  from (select "t7"."title", "t7"."genre", "t7"."price", "t7"."id", "t7"."title" as "__o1", "t7"."id" as "__o2" from "app_public"."books" "t7"
  where "t7"."author_id" = "t1"."id"
  order by "t7"."title" asc nulls last, "t7"."id" asc nulls last
  limit %(p1)s::bigint) "t6"
  left join lateral (select (select coalesce(json_agg("t11".j), '[]'::json)
  from (select json_build_object('label', "t8"."label") as j
  from (select "t9"."label", "t9"."label" as "__o1", "t9"."id" as "__o2" from "app_public"."shelves" "t9" join "app_public"."book_shelves" "t10" on "t9"."id" = "t10"."shelf_id"
  where "t10"."book_id" = "t6"."id"
  order by "t9"."label" asc nulls last, "t9"."id" asc nulls last
  limit %(p2)s::bigint) "t8"
  order by "t8"."__o1" asc nulls last, "t8"."__o2" asc nulls last) "t11") as j) "t12" on true
  order by "t6"."__o1" asc nulls last, "t6"."__o2" asc nulls last) "t13") as j) "t14" on true
  order by "t1"."__o1" asc nulls last, "t1"."__o2" asc nulls last) "t15"))::text
