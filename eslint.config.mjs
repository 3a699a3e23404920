// Lint: typescript-eslint's recommended rules, no import cycles (import-x skips type-only imports;
// test/unit/import-cycles.test.ts counts them too), and the boundaries between the parts
// (DESIGN §1, STYLE.md Layout) as rules, so that no reviewer has to remember them. Run: npm run lint.
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

const SERVERS = ['./controller', './segmentstore', './server-kit'];
/** The layers built on the client's public modules only (DESIGN §1); more join as they are written. */
const LAYERS = ['./client/revisions', './client/archive', './client/documents', './client/couch'];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'bench/results/', 'proto/generated/', '**/*.js', '**/*.cjs', '**/*.mjs'] },
  ...tseslint.configs.recommended,
  {
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json'] })],
      'import-x/extensions': ['.ts'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Boundaries of the sources (tests may reach anything they test).
    ignores: ['test/**'],
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            { target: './client', from: [...SERVERS, './bin', './bench'], message: 'the client talks to the servers over gRPC only' },
            { target: [...SERVERS, './proto'], from: './client', message: 'servers and the wire contract never import the client' },
            { target: './controller', from: './segmentstore', message: 'components talk over gRPC only' },
            { target: './segmentstore', from: './controller', message: 'components talk over gRPC only' },
            { target: './proto', from: [...SERVERS, './bin', './bench'], message: 'proto/ is the wire contract only' },
            { target: './server-kit', from: ['./controller', './segmentstore', './bin', './bench'], message: 'the server kit serves the servers, not the other way round' },
            {
              target: './segmentstore/storage',
              from: ['./segmentstore/service', './server-kit'],
              except: ['./fault.ts'],
              message: 'storage imports no gRPC and no service code (its fault type is server-kit/fault.ts)',
            },
            { target: LAYERS, from: './client/internal', message: "a layer uses only the client's public modules" },
            {
              target: './couch',
              from: ['./controller', './segmentstore', './client/internal', './bin', './bench'],
              message: "the CouchDB endpoint uses only the client's public modules and the server kit",
            },
            { target: ['./client', ...SERVERS, './proto'], from: './couch', message: 'nothing below the CouchDB endpoint imports it' },
          ],
        },
      ],
      'no-restricted-imports': ['error', { patterns: [] }],
    },
  },
  {
    files: ['segmentstore/storage/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['@grpc/*'], message: 'storage imports no gRPC' }] }] },
  },
);
