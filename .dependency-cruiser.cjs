// Architecture rules for src/ and packages/, checked by `npm run lint:deps` (dependency-cruiser).
//
// Vocabulary
//   area        - a first-level folder under src/ with a module.ts (listed in src/areas.ts) that owns a resource:
//                 src/accounts, src/billing, src/databases, ... Everything under it belongs to it
//                 (src/billing/bank/repo.ts is billing's).
//   shared      - first-level folders that are machinery, not areas (no module.ts): SHARED below. Loading this file
//                 checks that every folder of src/ is one or the other, so the list cannot go stale.
//   facade      - an area's `public.ts`: exactly what other areas may use of it (src/billing/public.ts, ...).
//   contract    - an area's `contract.ts`: the types of what it provides through the kernel's registry.
//   route file  - a file that registers HTTP routes: `routes.ts`, `*-routes.ts`, `routes-*.ts`
//                 anywhere below an area, or any file in a `routes/` folder.
//   repo        - SQL access: `repo.ts`, `*-repo.ts`, or a file in a `repo/` folder.
//
// Type-only imports (`import type`) ARE seen (tsPreCompilationDeps: true) and count, except where a rule says
// otherwise: routes may name a repo's row type, and an area may name the types of another area's facade or
// contract (erased at run time, they give no access to its code or tables).

const fs = require("node:fs");
const path = require("node:path");

const SHARED = [
  "http",
  "auth",
  "store",
  "jobs",
  "config",
  "kernel",
  "mail",
  "net",
  "audit",
  "pgserver",
  "runtime",
  "agent",
];
const SHARED_RE = `(?:${SHARED.join("|")})`;
const AREA = `^src/(?!${SHARED_RE}/)([^/]+)/`;

for (const entry of fs.readdirSync(path.join(__dirname, "src"), { withFileTypes: true })) {
  if (!entry.isDirectory()) continue;
  const isArea = fs.existsSync(path.join(__dirname, "src", entry.name, "module.ts"));
  if (isArea === SHARED.includes(entry.name))
    throw new Error(
      `.dependency-cruiser.cjs: src/${entry.name} ${isArea ? "has a module.ts but is listed as shared" : "has no module.ts and is not listed as shared"}`,
    );
}

// (Lists of simple patterns: dependency-cruiser refuses regexes with nested repetition.)
const ROUTE_FILE = ["^src/.+/[^/]*routes[^/]*\\.ts$", "^src/.+/routes/[^/]+\\.ts$"];
const REPO_FILE = ["^src/.+/repo\\.ts$", "^src/.+/[^/]+-repo\\.ts$", "^src/.+/repo/.+\\.ts$"];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      // Shared machinery serves every area and names none of them. The kernel above all: it is what areas meet
      // in (src/areas.ts is the one list of areas), so adding an area never changes it. Types included.
      name: "shared-knows-no-area",
      severity: "error",
      from: { path: `^src/${SHARED_RE}/` },
      to: { path: AREA },
    },
    {
      // Areas meet through the kernel or through the other area's facade (public.ts), never its other files: what
      // an area offers is written down in one place, and everything else in it can change without a hunt.
      name: "areas-meet-through-public",
      severity: "error",
      from: { path: AREA },
      to: { path: AREA, pathNot: ["^src/$1/", "^src/[^/]+/public\\.ts$"], dependencyTypesNot: ["type-only"] },
    },
    {
      // Type-only, an area may also name what another area provides through the kernel (its contract.ts).
      name: "area-types-from-public-or-contract",
      severity: "error",
      from: { path: AREA },
      to: {
        path: AREA,
        pathNot: ["^src/$1/", "^src/[^/]+/(?:public|contract)\\.ts$"],
        dependencyTypes: ["type-only"],
      },
    },
    {
      // Billing meters, pauses and admits through the kernel's registries (metering sources, lifecycles,
      // admission), never through a resource area's code or tables. Of the other areas it knows only accounts
      // (an account's spend caps), through its facade.
      name: "billing-knows-no-resource-area",
      severity: "error",
      from: { path: "^src/billing/" },
      to: { path: AREA, pathNot: "^src/(?:billing|accounts)/" },
    },
    {
      // A cycle means two modules cannot be understood, tested or moved apart.
      // Deliberately strict: type-only edges count too. They are erased at run time, so a cycle of
      // them cannot break module initialisation, but they still tie the layers together, and any
      // such edge becomes a runtime one the day someone imports a value along it. The known case
      // (every area's routes.ts -> app.ts for AppContext -> areas.ts -> routes.ts) is fixed by
      // moving AppContext into a shared module (src/kernel), not by tolerating it here.
      name: "no-circular",
      severity: "error",
      from: { path: "^(?:src|packages)/" },
      to: { circular: true },
    },
    {
      // The SDK, the CLI and the console are clients of the public API (/v1): they never import the server's code.
      name: "packages-not-to-src",
      severity: "error",
      from: { path: "^packages/" },
      to: { path: "^src/" },
    },
    {
      // Route files do HTTP: parse, authorise, call a service, shape the answer. SQL lives behind
      // the area's service, so a route never calls a repo directly.
      // Type-only imports are tolerated: naming a repo's row type in a response mapper gives no
      // access to the database.
      name: "routes-not-to-repo",
      severity: "error",
      from: { path: ROUTE_FILE },
      to: { path: REPO_FILE, dependencyTypesNot: ["type-only"] },
    },
    {
      // Route files see a provider only through its interface (provider/types.ts) on the context;
      // the concrete implementation (provider/local/..., any other provider/<name>/) is chosen by
      // main.ts and must be swappable without touching routes. Types included: a route that names
      // a local-provider type already depends on that implementation.
      name: "routes-not-to-concrete-provider",
      severity: "error",
      from: { path: ROUTE_FILE },
      to: { path: "^src/.+/provider/.+", pathNot: "^src/.+/provider/types\\.ts$" },
    },
    {
      // An area's repo is private to that area: other areas (and shared code) go through the owning
      // area's service, so its tables can change without a hunt through the code base.
      // Types included: another area's row type is its storage layout.
      name: "no-foreign-repo",
      severity: "error",
      // $1 is the importer's first folder under src/ (its area, or a shared folder).
      from: { path: "^src/([^/]+)/" },
      to: {
        path: REPO_FILE.map((re) => re.replace("^src/", `^src/(?!${SHARED_RE}/)`)),
        pathNot: "^src/$1/",
      },
    },
    {
      // The organizations area is a core (the files directly in src/orgs) and sub-areas (each folder below it, one
      // module each, listed in src/areas.ts). A sub-area reaches the core only through src/orgs/public.ts and never
      // another sub-area, so each one can be understood, changed or left out alone (src/orgs/README.md).
      name: "orgs-sub-areas-meet-through-core",
      severity: "error",
      // $1 is the importer's sub-area folder
      from: { path: "^src/orgs/([^/]+)/" },
      to: { path: "^src/orgs/", pathNot: ["^src/orgs/$1/", "^src/orgs/public\\.ts$"] },
    },
    {
      // The organizations core names none of its sub-areas: they register themselves (src/areas.ts).
      name: "orgs-core-knows-no-sub-area",
      severity: "error",
      from: { path: "^src/orgs/[^/]+\\.ts$" },
      to: { path: "^src/orgs/[^/]+/" },
    },
    {
      // Production code never depends on tests, fakes or test helpers.
      name: "src-not-to-test",
      severity: "error",
      from: { path: "^(?:src|packages)/" },
      to: { path: "^test/" },
    },
    {
      // src/app.ts assembles the whole application; only the entry point (src/main.ts) builds it.
      // Anything else importing it - even for a type - drags in every area and makes a cycle.
      // Shared types (AppContext, ...) belong in a shared module such as src/kernel.
      name: "app-only-from-main",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/main\\.ts$" },
      to: { path: "^src/app\\.ts$" },
    },
    {
      // Every import must resolve; an unresolvable one is a typo or a missing dependency.
      name: "not-to-unresolvable",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(?:node_modules|data|\\.test-data|dist|packages/[^/]+/dist)/" },
    // See `import type` too, so the rules above can tell type-only edges apart.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      mainFields: ["module", "main", "types", "typings"],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
