package kvt.bench.pravega;

import io.pravega.client.ClientConfig;
import io.pravega.client.KeyValueTableFactory;
import io.pravega.client.admin.KeyValueTableManager;
import io.pravega.client.admin.StreamManager;
import io.pravega.client.tables.ConditionalTableUpdateException;
import io.pravega.client.tables.Insert;
import io.pravega.client.tables.IteratorItem;
import io.pravega.client.tables.KeyValueTable;
import io.pravega.client.tables.KeyValueTableClientConfiguration;
import io.pravega.client.tables.KeyValueTableConfiguration;
import io.pravega.client.tables.Put;
import io.pravega.client.tables.TableEntry;
import io.pravega.client.tables.TableKey;
import io.pravega.client.tables.TableModification;
import io.pravega.client.tables.Version;
import io.pravega.common.util.AsyncIterator;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * The Pravega peer's driver: Pravega's own Java client (KeyValueTableFactory → KeyValueTable) behind a
 * tiny framed protocol on stdin/stdout, so the Node benchmark drives Pravega with the same workloads,
 * key streams and meters as every other peer (bench/peers/pravega-peer.ts is the other end).
 *
 * <p>Frames are big-endian: a request is {@code int32 length, int32 id, int8 op, payload}; a response
 * is {@code int32 length, int32 id, int8 status, payload}, where length counts the bytes after itself.
 * Strings are {@code int16 length + UTF-8}, byte arrays {@code int32 length + bytes}. Requests are
 * answered out of order as Pravega completes them (many are in flight at once); the response with
 * id 0 says the tables are ready (or why not).
 *
 * <p>Keys map onto Pravega's fixed-length keys: a family-less key is the primary key of a table without
 * secondary keys; a key of a family is (family as primary key, key as secondary key) in a second table,
 * so a family's keys share one table segment and a family's scan is Pravega's iterator over one primary
 * key. Names are UTF-8, zero-padded to the table's key lengths (longer ones are refused).
 */
public final class PravegaDriver {
    static final byte PUT = 1, GET = 2, GET_VERSIONED = 3, REPLACE = 4, PUT_BATCH = 5, PUT_IN_FAMILY = 6, GET_IN_FAMILY = 7, SCAN = 8, PING = 9, PUT_MANY = 10;
    static final byte OK = 0, ABSENT = 1, CONFLICT = 2, ERROR = 3;

    /** Bytes of a family-less key, and of a family (the primary keys). */
    static final int PRIMARY_KEY_LENGTH = 24;
    /** Bytes of a key within a family (the secondary key). */
    static final int SECONDARY_KEY_LENGTH = 16;
    /** Entries per page of a family scan (kvt's peer reads 1,000 a page too). */
    static final int SCAN_PAGE = 1000;

    private final KeyValueTable keys;
    private final KeyValueTable families;
    private final LinkedBlockingQueue<byte[]> out = new LinkedBlockingQueue<>();

    private PravegaDriver(KeyValueTable keys, KeyValueTable families) {
        this.keys = keys;
        this.families = families;
    }

    public static void main(String[] args) throws Exception {
        String controller = arg(args, "--controller", "tcp://127.0.0.1:19090");
        String scope = arg(args, "--scope", "bench");
        String table = arg(args, "--table", "bench");
        int partitions = Integer.parseInt(arg(args, "--partitions", "8"));
        OutputStream stdout = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16);
        // Pravega's libraries must not print on the frames' stream.
        System.setOut(System.err);
        PravegaDriver driver;
        KeyValueTableFactory factory;
        try {
            ClientConfig config = ClientConfig.builder().controllerURI(URI.create(controller)).build();
            try (StreamManager streams = StreamManager.create(config); KeyValueTableManager manager = KeyValueTableManager.create(config)) {
                streams.createScope(scope);
                manager.createKeyValueTable(scope, table + "-keys", tableConfig(partitions, 0));
                manager.createKeyValueTable(scope, table + "-families", tableConfig(partitions, SECONDARY_KEY_LENGTH));
            }
            factory = KeyValueTableFactory.withScope(scope, config);
            KeyValueTableClientConfiguration clientConfig = KeyValueTableClientConfiguration.builder().build();
            driver = new PravegaDriver(factory.forKeyValueTable(table + "-keys", clientConfig), factory.forKeyValueTable(table + "-families", clientConfig));
        } catch (Exception e) {
            writeFrame(stdout, response(0, ERROR, str(message(e))));
            stdout.flush();
            System.exit(1);
            return;
        }
        Thread writer = new Thread(() -> driver.writeLoop(stdout), "frames-out");
        writer.setDaemon(true);
        writer.start();
        driver.out.add(response(0, OK, new byte[0]));
        driver.readLoop(new DataInputStream(new BufferedInputStream(System.in, 1 << 16)));
        // stdin closed: the benchmark is done with this peer.
        driver.keys.close();
        driver.families.close();
        factory.close();
        System.exit(0);
    }

    private static KeyValueTableConfiguration tableConfig(int partitions, int secondaryKeyLength) {
        return KeyValueTableConfiguration.builder().partitionCount(partitions).primaryKeyLength(PRIMARY_KEY_LENGTH).secondaryKeyLength(secondaryKeyLength).build();
    }

    private static String arg(String[] args, String name, String fallback) {
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals(name)) return args[i + 1];
        }
        return fallback;
    }

    /** Reads requests until stdin ends, starting each one's asynchronous Pravega call. */
    private void readLoop(DataInputStream in) throws IOException {
        for (;;) {
            int length;
            try {
                length = in.readInt();
            } catch (EOFException end) {
                return;
            }
            byte[] frame = new byte[length];
            in.readFully(frame);
            ByteBuffer req = ByteBuffer.wrap(frame);
            int id = req.getInt();
            byte op = req.get();
            CompletableFuture<byte[]> reply;
            try {
                reply = dispatch(id, op, req);
            } catch (RuntimeException e) {
                reply = CompletableFuture.failedFuture(e);
            }
            reply.whenComplete((bytes, err) -> out.add(err == null ? bytes : response(id, ERROR, str(message(err)))));
        }
    }

    private CompletableFuture<byte[]> dispatch(int id, byte op, ByteBuffer req) {
        switch (op) {
            case PUT: {
                TableKey key = new TableKey(primary(readString(req)));
                return keys.update(new Put(key, readBytes(req))).thenApply(v -> response(id, OK, new byte[0]));
            }
            case GET:
                return keys.get(new TableKey(primary(readString(req)))).thenApply(e -> e == null ? response(id, ABSENT, new byte[0]) : response(id, OK, bytes(e.getValue())));
            case GET_VERSIONED:
                return keys.get(new TableKey(primary(readString(req)))).thenApply(e -> e == null ? response(id, ABSENT, new byte[0]) : response(id, OK, concat(bytes(e.getValue()), str(e.getVersion().toString()))));
            case REPLACE: {
                TableKey key = new TableKey(primary(readString(req)));
                ByteBuffer value = readBytes(req);
                String version = readString(req);
                TableModification m = version.isEmpty() ? new Insert(key, value) : new Put(key, value, Version.fromString(version));
                return keys.update(m).handle((v, err) -> {
                    if (err == null) return response(id, OK, new byte[0]);
                    if (unwrap(err) instanceof ConditionalTableUpdateException) return response(id, CONFLICT, new byte[0]);
                    throw new CompletionException(unwrap(err));
                });
            }
            case PUT_BATCH: {
                ByteBuffer family = primary(readString(req));
                int n = req.getInt();
                List<TableModification> puts = new ArrayList<>(n);
                for (int i = 0; i < n; i++) puts.add(new Put(new TableKey(family.duplicate(), secondary(readString(req))), readBytes(req)));
                return families.update(puts).thenApply(v -> response(id, OK, new byte[0]));
            }
            case PUT_IN_FAMILY: {
                TableKey key = new TableKey(primary(readString(req)), secondary(readString(req)));
                return families.update(new Put(key, readBytes(req))).thenApply(v -> response(id, OK, new byte[0]));
            }
            case GET_IN_FAMILY: {
                TableKey key = new TableKey(primary(readString(req)), secondary(readString(req)));
                return families.get(key).thenApply(e -> e == null ? response(id, ABSENT, new byte[0]) : response(id, OK, bytes(e.getValue())));
            }
            case SCAN: {
                AsyncIterator<IteratorItem<TableEntry>> pages = families.iterator().maxIterationSize(SCAN_PAGE).forPrimaryKey(primary(readString(req))).entries();
                return countPages(pages, 0).thenApply(n -> response(id, OK, ByteBuffer.allocate(4).putInt(n).array()));
            }
            case PUT_MANY: {
                // Loading only: one update per key (they lie in different primary keys), all at once.
                int n = req.getInt();
                CompletableFuture<?>[] puts = new CompletableFuture<?>[n];
                for (int i = 0; i < n; i++) puts[i] = keys.update(new Put(new TableKey(primary(readString(req))), readBytes(req)));
                return CompletableFuture.allOf(puts).thenApply(v -> response(id, OK, new byte[0]));
            }
            case PING:
                return CompletableFuture.completedFuture(response(id, OK, new byte[0]));
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    private static CompletableFuture<Integer> countPages(AsyncIterator<IteratorItem<TableEntry>> pages, int sofar) {
        return pages.getNext().thenCompose(page -> page == null ? CompletableFuture.completedFuture(sofar) : countPages(pages, sofar + page.getItems().size()));
    }

    /** Writes queued responses, flushing once the queue is empty (one write for many responses under load). */
    private void writeLoop(OutputStream stdout) {
        List<byte[]> batch = new ArrayList<>();
        try {
            for (;;) {
                batch.add(out.take());
                out.drainTo(batch);
                for (byte[] frame : batch) writeFrame(stdout, frame);
                batch.clear();
                if (out.isEmpty()) stdout.flush();
            }
        } catch (InterruptedException | IOException e) {
            System.exit(1);
        }
    }

    private static void writeFrame(OutputStream stdout, byte[] frame) throws IOException {
        stdout.write(frame.length >>> 24);
        stdout.write(frame.length >>> 16);
        stdout.write(frame.length >>> 8);
        stdout.write(frame.length);
        stdout.write(frame);
    }

    private static byte[] response(int id, byte status, byte[] payload) {
        return ByteBuffer.allocate(5 + payload.length).putInt(id).put(status).put(payload).array();
    }

    private static ByteBuffer primary(String name) {
        return padded(name, PRIMARY_KEY_LENGTH, "primary key (family or family-less key)");
    }

    private static ByteBuffer secondary(String name) {
        return padded(name, SECONDARY_KEY_LENGTH, "secondary key (key within a family)");
    }

    private static ByteBuffer padded(String name, int length, String what) {
        byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
        if (utf8.length > length) throw new IllegalArgumentException(what + " \"" + name + "\" is " + utf8.length + " bytes; the maximum is " + length);
        byte[] key = new byte[length];
        System.arraycopy(utf8, 0, key, 0, utf8.length);
        return ByteBuffer.wrap(key);
    }

    private static String readString(ByteBuffer req) {
        int n = req.getShort() & 0xffff;
        String s = new String(req.array(), req.arrayOffset() + req.position(), n, StandardCharsets.UTF_8);
        req.position(req.position() + n);
        return s;
    }

    private static ByteBuffer readBytes(ByteBuffer req) {
        int n = req.getInt();
        ByteBuffer value = ByteBuffer.wrap(req.array(), req.arrayOffset() + req.position(), n).slice();
        req.position(req.position() + n);
        return value;
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.duplicate().get(a);
        return ByteBuffer.allocate(4 + a.length).putInt(a.length).put(a).array();
    }

    private static byte[] str(String s) {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(utf8.length, 0xffff);
        return ByteBuffer.allocate(2 + n).putShort((short) n).put(utf8, 0, n).array();
    }

    private static byte[] concat(byte[] a, byte[] b) {
        return ByteBuffer.allocate(a.length + b.length).put(a).put(b).array();
    }

    private static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) t = t.getCause();
        return t;
    }

    private static String message(Throwable t) {
        Throwable u = unwrap(t);
        return u.getClass().getSimpleName() + ": " + u.getMessage();
    }
}
