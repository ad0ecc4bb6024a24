// ESLint flat config. Formatting is Prettier's job (see .prettierrc.json);
// eslint-config-prettier switches off every stylistic rule that could disagree with it.
// Deliberately the non-type-checked typescript-eslint presets: linting stays a few seconds,
// and `tsc --noEmit` (npm run typecheck) already does the type-level checking.
import { defineConfig } from "eslint/config";
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import prettier from "eslint-config-prettier";
import globals from "globals";

export default defineConfig(
  {
    ignores: [
      "node_modules/",
      "data/",
      ".test-data/",
      "scratch/",
      "dist/",
      "packages/*/dist/",
      "packages/sdk/src/schema.d.ts",
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: {
      sourceType: "module",
      globals: { ...globals.node },
    },
    linterOptions: {
      reportUnusedDisableDirectives: "error",
    },
    rules: {
      // Unused things are errors, but `_`-prefixed names mark "intentionally unused"
      // (callback parameters fixed by a signature, destructuring to omit a field).
      // tsc's noUnusedLocals covers locals too; this also covers parameters.
      "@typescript-eslint/no-unused-vars": [
        "error",
        {
          args: "after-used",
          argsIgnorePattern: "^_",
          varsIgnorePattern: "^_",
          caughtErrors: "all",
          caughtErrorsIgnorePattern: "^_",
          destructuredArrayIgnorePattern: "^_",
          ignoreRestSiblings: true,
        },
      ],
      // In production code `any` switches type checking off silently; prefer `unknown` + narrowing.
      // A warning, not an error: at a few boundaries (a heterogeneous registry, a driver's loose
      // types) it is the honest type, and such a line should carry an eslint-disable with a reason.
      "@typescript-eslint/no-explicit-any": "warn",
      // Type-only imports must say so: the dependency rules (.dependency-cruiser.cjs)
      // and the runtime both care whether an import is erased.
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      // `==`/`!=` only for the null-or-undefined check.
      eqeqeq: ["error", "always", { null: "ignore" }],
      // A file is read at once: past 400 lines it gets split along its sections.
      "max-lines": ["error", { max: 400 }],
    },
  },
  {
    // Control-plane SQL lives in repo files (`repo.ts`, `*-repo.ts`, a `repo/` folder): a `.query(` with the SQL
    // written in place (a string, a template or a {text} object) anywhere else fails the lint. Shared store
    // machinery (src/store, src/jobs) and providers (SQL against customers' own servers) are exempt.
    files: ["src/**/*.ts"],
    ignores: [
      "src/**/repo.ts",
      "src/**/*-repo.ts",
      "src/**/repo/**",
      "src/store/**",
      "src/jobs/**",
      "src/**/provider/**",
    ],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector:
            "CallExpression[callee.property.name='query'][arguments.0.type=/^(Literal|TemplateLiteral|ObjectExpression)$/]",
          message:
            "Control-plane SQL belongs in the area's repo file (repo.ts, *-repo.ts or repo/): call a repo function.",
        },
      ],
    },
  },
  {
    // Tests and benchmarks read loosely-typed JSON answers (`res.json() as any`) and build fakes of
    // third-party payloads; the assertions are the checking there, so `any` is not flagged.
    files: ["test/**/*.ts", "bench/**/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    // CommonJS config files (dependency-cruiser): `require` is how they import.
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs" },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  prettier,
);
