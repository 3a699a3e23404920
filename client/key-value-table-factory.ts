/**
 * Creates {@link KeyValueTable} handles for the tables of one scope. All tables of a factory share
 * its gRPC channels (one per controller / segment store address) and its coalescer, so concurrent
 * operations on different tables bound for one store still travel together.
 */
import { NAME_PATTERN } from '../proto/limits';
import { InvalidArgumentError, ObjectClosedError } from './errors';
import { clientMetrics } from './internal/client-metrics';
import { Coalescer } from './internal/coalescer';
import { Connections } from './internal/connections';
import { RoutingCache } from './internal/routing';
import { TableTransport } from './internal/table-transport';
import { GrpcKeyValueTable } from './grpc-key-value-table';
import type { KeyValueTable } from './key-value-table';
import { checkFactoryOptions, defaultKeyValueTableFactoryOptions, KeyValueTableFactoryInput, KeyValueTableFactoryOptions, mergeOptions } from './options';
import type { Serializer } from './serializers';

/** Serializers of a table's keys and values. */
export interface KeyValueTableConfig<K, V> {
  keySerializer: Serializer<K>;
  valueSerializer: Serializer<V>;
}

/** Checks a scope or table name against `[A-Za-z0-9.-]{1,250}`. */
export function checkName(field: 'scope' | 'table', name: unknown): string {
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
    const shown = typeof name === 'string' ? JSON.stringify(name.length > 60 ? `${name.slice(0, 60)}…` : name) : String(name);
    const length = typeof name === 'string' ? ` (${name.length} characters)` : '';
    throw new InvalidArgumentError(`${field} name ${shown}${length} is invalid: it must be 1 to 250 characters of A-Z a-z 0-9 . -`);
  }
  return name;
}

/** Hands out tables of one scope. */
export class KeyValueTableFactory implements AsyncDisposable {
  private readonly connections: Connections;
  private readonly coalescer: Coalescer;
  private readonly tables = new Set<GrpcKeyValueTable<unknown, unknown>>();
  /** Routing per table name, shared by every handle of that table. */
  private readonly routings = new Map<string, RoutingCache>();
  private closed = false;

  private constructor(
    readonly scope: string,
    private readonly options: KeyValueTableFactoryOptions,
  ) {
    this.connections = new Connections(options.controller, { tls: options.tls, token: options.token });
    this.coalescer = new Coalescer(this.connections, options.coalescing, clientMetrics(options.metrics));
  }

  /**
   * A factory for the tables of `scope`.
   * @throws InvalidArgumentError when the scope name or an option is invalid (the message names it and its limit).
   */
  static withScope(scope: string, options: KeyValueTableFactoryInput = {}): KeyValueTableFactory {
    checkName('scope', scope);
    const merged = mergeOptions(defaultKeyValueTableFactoryOptions(), options as Partial<KeyValueTableFactoryOptions>);
    checkFactoryOptions(merged);
    return new KeyValueTableFactory(scope, merged);
  }

  /**
   * A handle on table `name` (no round trip: a missing table shows up as TableNotFoundError on first use),
   * a {@link GrpcKeyValueTable}.
   * @throws InvalidArgumentError when the name is invalid; ObjectClosedError after close().
   */
  forKeyValueTable<K, V>(name: string, config: KeyValueTableConfig<K, V>): KeyValueTable<K, V> {
    if (this.closed) throw new ObjectClosedError('the key-value table factory is closed');
    checkName('table', name);
    if (!config?.keySerializer || !config?.valueSerializer) throw new InvalidArgumentError('forKeyValueTable needs keySerializer and valueSerializer');
    const fullName = `${this.scope}/${name}`;
    const transport = new TableTransport(fullName, this.scope, name, this.connections, this.coalescer, this.options, this.routings.get(name));
    this.routings.set(name, transport.routing);
    const table: GrpcKeyValueTable<K, V> = new GrpcKeyValueTable(fullName, transport, config.keySerializer, config.valueSerializer, () => {
      this.tables.delete(table as GrpcKeyValueTable<unknown, unknown>);
    });
    this.tables.add(table as GrpcKeyValueTable<unknown, unknown>);
    return table;
  }

  /**
   * Closes every table of this factory and its channels. Idempotent. Calls still queued or in flight
   * end with ObjectClosedError; an update among them may or may not have been applied (like one that
   * ends with `UnavailableError` and `maybeApplied`), so await your calls before closing.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.tables].map((t) => t.close()));
    this.coalescer.close();
    this.connections.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
