// PostGraphile 5.1.5 for the benchmark (BENCH.md): the Amber preset with postgraphile-plugin-connection-filter
// and @graphile/pg-aggregates (Q5), plus the three pagila changes the command line cannot carry and a month grouping
// for Q5. bench/run.py copies this file next to the node_modules it installs in .bench-cache/postgraphile/ and sets
// DATABASE_URL, BENCH_HOST and BENCH_PORT.
import { PostGraphileAmberPreset } from "postgraphile/presets/amber";
import { PostGraphileConnectionFilterPreset } from "postgraphile-plugin-connection-filter";
import { PgAggregatesPreset } from "@graphile/pg-aggregates";
import { makePgService } from "postgraphile/adaptors/pg";
import { makeJSONPgSmartTagsPlugin } from "postgraphile/utils";

// 1. Enum labels 'PG-13' and 'NC-17' are no GraphQL names; without this, Film, Category and FilmCategory vanish.
const EnumNamesPlugin = {
  name: "BenchEnumNamesPlugin",
  version: "0.0.0",
  inflection: {
    replace: {
      enumValue(previous, _options, value, codec) {
        return previous(value.replace(/-/g, "_"), codec);
      },
    },
  },
};

// 3. payment is partitioned and its foreign keys exist only on the partitions: declare them on the parent.
const PaymentForeignKeysPlugin = makeJSONPgSmartTagsPlugin({
  version: 1,
  config: {
    class: {
      "public.payment": {
        tags: {
          foreignKey: [
            "(customer_id) references public.customer (customer_id)",
            "(rental_id) references public.rental (rental_id)",
            "(staff_id) references public.staff (staff_id)",
          ],
        },
      },
    },
  },
});

// 4. Q5 groups payments by month: pg-aggregates truncates timestamps to the hour and the day only, so add
// `truncated-to-month` (GroupBy value PAYMENT_DATE_TRUNCATED_TO_MONTH; date_trunc in the session time zone).
const MonthGroupByPlugin = {
  name: "BenchMonthGroupByPlugin",
  version: "0.0.0",
  after: ["PgAggregatesSpecsPlugin"],
  schema: {
    hooks: {
      build(build) {
        const { sql, dataplanPg: { TYPES } } = build;
        build.pgAggregateGroupBySpecs.push({
          id: "truncated-to-month",
          isSuitableType: (codec) => codec === TYPES.timestamp || codec === TYPES.timestamptz,
          sqlWrap: (sqlFrag) => sql`date_trunc('month', ${sqlFrag})`,
          sqlWrapCodec: (codec) => codec,
        });
        return build;
      },
    },
  },
};

export default {
  extends: [PostGraphileAmberPreset, PostGraphileConnectionFilterPreset, PgAggregatesPreset],
  plugins: [EnumNamesPlugin, PaymentForeignKeysPlugin, MonthGroupByPlugin],
  // 2. v5 hides filters and orderBy on unindexed columns (film.rating, film.length).
  disablePlugins: ["PgIndexBehaviorsPlugin"],
  pgServices: [makePgService({ connectionString: process.env.DATABASE_URL, schemas: ["public"] })],
  grafserv: {
    host: process.env.BENCH_HOST ?? "127.0.0.1",
    port: Number(process.env.BENCH_PORT ?? 4811),
    graphiql: false,
    watch: false,
  },
  grafast: { explain: false },
};
