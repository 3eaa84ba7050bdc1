select (select (select coalesce(json_agg("t5".j), '[]'::json)
  from (select json_build_object('name', "t1"."name", 'bookCount', "app_public"."authors_book_count"("t1".__row)::text) as j
  from (select "t2"."name", "t2" as __row, "t2"."id" as "__o1" from "app_public"."authors" "t2"
  where ((exists (select from "app_public"."books" "t3"
  where "t3"."author_id" = "t2"."id" and ("t3"."pages" > %(p0)s::integer)) or ((select count(*) from "app_public"."books" "t4"
  where "t4"."author_id" = "t2"."id") = %(p1)s::bigint)) and (not ("t2"."name" like %(p2)s::text)))
  order by "t2"."id" asc nulls last
  limit %(p3)s::bigint) "t1"
  order by "t1"."__o1" asc nulls last) "t5"))::text, (select (select coalesce(json_agg("t10".j), '[]'::json)
  from (select json_build_object('label', "t6"."label") as j
  from (select "t7"."label", "t7"."id" as "__o1" from "app_public"."shelves" "t7"
  where (not exists (select from "app_public"."books" "t8" join "app_public"."book_shelves" "t9" on "t8"."id" = "t9"."book_id"
  where "t9"."shelf_id" = "t7"."id" and ("t8"."in_print" = %(p4)s::boolean) is not true))
  order by "t7"."id" asc nulls last
  limit %(p5)s::bigint) "t6"
  order by "t6"."__o1" asc nulls last) "t10"))::text
