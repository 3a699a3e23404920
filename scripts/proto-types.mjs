// Generates the TypeScript message types of the .proto files under proto/kvt/ into proto/generated/ (or the
// directory given) with proto-loader-gen-types, under the loader options of proto/load.ts.
// Run: npm run proto:types. test/unit/proto/generated-types.test.ts fails when the checked-in
// files differ from what this writes.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const PROTO_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'proto');
const FILES = ['kvt/v1/segmentstore.proto', 'kvt/v1/controller.proto', 'kvt/ops/v1/metrics.proto'];
// PROTO_LOADER_OPTIONS of proto/load.ts: camelCase (no --keepCase), longs and enums as String,
// bytes as Buffer, defaults filled in, the oneofs' virtual fields.
const OPTIONS = ['--longs=String', '--enums=String', '--bytes=Buffer', '--defaults', '--oneofs', '--includeComments'];

const out = path.resolve(process.argv[2] ?? path.join(PROTO_DIR, 'generated'));
const require = createRequire(import.meta.url);
const generator = path.join(path.dirname(require.resolve('@grpc/proto-loader/package.json')), 'build', 'bin', 'proto-loader-gen-types.js');

rmSync(out, { recursive: true, force: true });
// Run from proto/ with `-I .`, so each file's "Original file" header is the same on every machine.
execFileSync(process.execPath, [generator, ...OPTIONS, '-I', '.', '-O', out, ...FILES], { cwd: PROTO_DIR, stdio: 'inherit' });
