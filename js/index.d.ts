// Types for darmok and darmok/json (the same functions); darmok/protobuf's
// are in protobuf.d.ts, which shares everything here but the byte type.

/** A class darmok can register: anything constructible with a prototype. */
export type Class<T = any> = abstract new (...args: any[]) => T;

/** The plain field data of an instance, as migrations, toData and fromData see it. */
export type FieldData = Record<string, any>;

/** The options form of serializable() (docs/VERSIONING.md). */
export interface SerializableOptions<T = any> {
  /** The class key written into the bytes. Default: the class name at registration. */
  key?: string;
  /**
   * Classes used inside this one, registered with it (under their default
   * keys unless registered already). Name nested types of previous versions
   * here too, so old bytes that hold them still decode.
   */
  nested?: ReadonlyArray<Class>;
  /** The class version, written with every instance: an integer >= 1. Default 1. */
  version?: number;
  /**
   * Migration steps: `migrate[v]` turns the field data of version v into
   * that of version v + 1. Keys must run without a gap up to version - 1;
   * checked at registration.
   */
  migrate?: { [fromVersion: number]: (data: FieldData) => FieldData };
  /** Older keys of this class (a renamed class): bytes written under them decode as this class. */
  aliases?: ReadonlyArray<string>;
  /** Field names never written. */
  exclude?: ReadonlyArray<string>;
  /** The full list of fields to write, in this order (a name the instance lacks is skipped). */
  fields?: ReadonlyArray<string>;
  /** The object whose own enumerable fields are written instead of the instance's. */
  toData?: (instance: T) => FieldData;
  /** Build the instance from its (migrated) field data; default: Object.create(prototype) plus the fields. */
  fromData?: (data: FieldData) => T;
  /**
   * The names fields are written under (docs/SHAPING.md): a named inflection,
   * or a function called once per field name per class. null: none, also
   * over a superclass's or the registry's. Default: inherited.
   */
  transformKeys?: KeyTransform | null;
  /** Exact wire names of fields, over transformKeys; merged with superclasses' and the registry's. */
  rename?: Readonly<Record<string, string>>;
}

/** A key inflection: camelCase, snake_case, kebab-case, PascalCase, or a function of (field, classKey). */
export type KeyTransform = 'camel' | 'snake' | 'kebab' | 'pascal' | ((field: string, classKey: string) => string);

/** Defaults for the classes of a registry that do not set these options themselves. */
export interface RegistryOptions {
  /** The wire names of fields; null: none. */
  transformKeys?: KeyTransform | null;
  /** Exact wire names of fields, over transformKeys. */
  rename?: Readonly<Record<string, string>> | null;
}

/** configure()'s options: RegistryOptions, where null clears a default. */
export type ConfigureOptions = RegistryOptions;

/**
 * Change the defaults of the default registry's classes (the registry
 * serializable() fills), those registered already included; a call changes
 * only the options it names. Registries from createRegistry() and codecs
 * with their own defaults are not affected.
 * @deprecated Give the defaults where the registry is made:
 * `createRegistry({ transformKeys, rename })` or `createCodec({ transformKeys, rename })`.
 */
export function configure(options: ConfigureOptions): void;

/** Field selection by class key: `{ Post: ['id', 'title'] }`. Compiled once per object. */
export type FieldSelection = Readonly<Record<string, ReadonlyArray<string>>>;

/** What serializable() returns in its decorator-factory forms. */
export interface SerializableDecorator {
  /** Legacy / TypeScript `experimentalDecorators` class decorator, or a plain call. */
  <C extends Class>(value: C): C;
  /** TC39 class decorator. */
  <C extends Class>(value: C, context: ClassDecoratorContext<C>): void;
}

/**
 * Register a class (tanagra 0.x form). Returns a constructor Proxy whose
 * instances carry an own, non-enumerable `_serializationKey`.
 */
export function serializable<C extends Class>(Class: C, nestedTypes?: ReadonlyArray<Class>, key?: string): C;
/**
 * tanagra-core 0.3's form: previousVersions (arrays of the classes earlier
 * versions nested) are registered and listed as nested too; the key comes fourth.
 */
export function serializable<C extends Class>(Class: C, nestedTypes: ReadonlyArray<Class> | undefined,
  previousVersions: ReadonlyArray<ReadonlyArray<Class>>, key?: string): C;
/** Register a class with options. Returns a constructor Proxy, as above. */
export function serializable<C extends Class>(Class: C, options: SerializableOptions<InstanceType<C>>): C;
/** Decorator factory (tanagra 1.x): `@serializable()`, `@serializable('key')`, `@serializable({ key, nested, version, ... })`. */
export function serializable(keyOrOptions?: string | SerializableOptions): SerializableDecorator;

export interface EncodeOptions {
  /**
   * Throw instead of skipping: ERR_UNSUPPORTED_TYPE for functions, symbols,
   * WeakMap, Promise, boxed primitives...; ERR_UNREGISTERED_CLASS for
   * instances of unregistered classes. Default false.
   */
  strict?: boolean;
  /** Deepest nesting allowed; deeper throws ERR_DEPTH. Default 1000. */
  maxDepth?: number;
  /** This call's format instead of the entry point's or codec's. */
  format?: Format;
  /**
   * true: the document as bytes in every format - JSON as its UTF-8 (a
   * Buffer in Node), made without a JS string, for Redis, a file or a
   * socket. Default false: JSON text as a string.
   */
  bytes?: boolean;
  /**
   * Keys of plain objects and instances in code-unit order of their written
   * names (Maps and Sets keep insertion order): canonical bytes. Default false.
   */
  sortKeys?: boolean;
  /** Write only these fields of instances of these class keys. */
  only?: FieldSelection;
  /** Leave out these fields of instances of these class keys. */
  except?: FieldSelection;
}

/** toPlain's options: encodeEntity's, without format and bytes. */
export type ToPlainOptions = Omit<EncodeOptions, 'format' | 'bytes'>;

/** fromPlain's options: decodeEntity's, without format and legacy (maxBytes bounds the tree's JSON text). */
export type FromPlainOptions = Omit<DecodeOptions, 'format' | 'legacy'>;

/** JSON data, as JSON.parse makes it. */
export type PlainValue = null | boolean | number | string | PlainValue[] | { [key: string]: PlainValue };

/** The tree JSON.parse(encodeEntity(value, options)) would give, made without JSON text. */
export function toPlain(value: unknown, options?: ToPlainOptions): PlainValue;

/**
 * Decode a plain tree of the JSON format (toPlain's, or a parsed request
 * body), as decodeEntity decodes its text. Class, when given, is registered first.
 */
export const fromPlain: DecodeFunction<unknown, FromPlainOptions>;

export interface DecodeOptions {
  /** An unregistered class key: 'throw' ERR_UNKNOWN_CLASS (default) or decode as a 'plain' object. */
  unknownClass?: 'throw' | 'plain';
  /**
   * An instance written by a newer version of its class: 'reject' throws
   * ERR_VERSION (default); 'accept' builds it anyway, unknown fields kept
   * as own properties.
   */
  newerVersion?: 'reject' | 'accept';
  /**
   * Documents written by tanagra-json (1.x and 0.x). 'auto' (default): read
   * as tanagra's when the top-level value is a plain object with a
   * `_serializationKey`; 'tanagra': always; 'none': never.
   */
  legacy?: 'auto' | 'tanagra' | 'none';
  /** Deepest nesting allowed; deeper throws ERR_DEPTH. Default 1000. */
  maxDepth?: number;
  /** Largest input in UTF-8 bytes; larger throws ERR_TOO_LARGE. Default 64 MiB. */
  maxBytes?: number;
  /**
   * Largest string (bytes), array (elements, holes included), Map or Set
   * (entries) or binary value (bytes); larger throws ERR_TOO_LARGE.
   * Default 16 Mi (16777216).
   */
  maxLength?: number;
  /**
   * Most characters of RegExp source in one document, all its RegExps
   * together; more throws ERR_TOO_LARGE. Default 16384.
   */
  maxRegExpLength?: number;
  /**
   * A RegExp with the v flag or a Unicode property escape (\p{...}), which
   * can take milliseconds per character to compile: 'reject' throws
   * ERR_FORMAT (default); 'accept' compiles it.
   */
  regExpProperties?: 'reject' | 'accept';
  /**
   * With Class: the top-level value is this collection (or null) and each
   * of its members (a Map's values) a Class or null, instead of a Class.
   */
  collection?: Collection;
  /** This call's format instead of the entry point's or codec's. */
  format?: Format;
}

/** With `{ bytes: true }`: the document as bytes (a Buffer in Node), darmok JSON as its UTF-8. */
export function encodeEntity(value: unknown, options: EncodeOptions & { bytes: true }): Bytes;
/** Encode a value to darmok protobuf bytes (a Buffer in Node). */
export function encodeEntity(value: unknown, options: EncodeOptions & { format: 'protobuf' }): Bytes;
/** Encode a value to darmok JSON text. */
export function encodeEntity(value: unknown, options?: EncodeOptions & { format?: 'json' }): string;
/** A format known only at run time: JSON text or protobuf bytes. */
export function encodeEntity(value: unknown, options: EncodeOptions): string | Bytes;

/** decodeEntity's `collection` option: what holds the Class instances at the top. */
export type Collection = 'array' | 'map' | 'set';

/** What decodeEntity(blob, Class, { collection }) gives: that collection of Class instances or nulls. */
export type DecodedCollection<T> = Array<T | null> | Set<T | null> | Map<unknown, T | null>;

/**
 * The forms of decodeEntity (and of fromPlain, over a plain tree) for
 * input In and options O. Class, when given, is registered first, and its
 * key and aliases are read as Class in this call.
 */
export interface DecodeFunction<In, O extends { collection?: Collection }> {
  /**
   * The top-level value is a Class (or of a subclass) or null: anything
   * else, an Array, Map or Set too, is ERR_UNEXPECTED_CLASS (`expected`:
   * Class's key, `actual`: the class key or kind of value found).
   */
  <C extends Class>(blob: In, Class: C, options?: O & { collection?: undefined }): InstanceType<C> | null;
  /**
   * `{ collection: 'array' }` (or 'set', 'map'): the top-level value is that
   * collection or null, and each of its members (a Map's values) a Class or
   * null; else ERR_UNEXPECTED_CLASS, with the path of the first member
   * that is not.
   */
  <C extends Class>(blob: In, Class: C, options: O & { collection: 'array' }): Array<InstanceType<C> | null> | null;
  <C extends Class>(blob: In, Class: C, options: O & { collection: 'set' }): Set<InstanceType<C> | null> | null;
  <C extends Class>(blob: In, Class: C, options: O & { collection: 'map' }): Map<unknown, InstanceType<C> | null> | null;
  /** A `collection` known only at run time. */
  <C extends Class>(blob: In, Class: C, options: O): InstanceType<C> | DecodedCollection<InstanceType<C>> | null;
  /** Without Class: any value, unchecked (`collection` needs a Class: ERR_INVALID_OPTION). */
  <T = any>(blob: In, Class?: null, options?: O & { collection?: undefined }): T;
  <T = any>(blob: In, options: O & { collection?: undefined }): T;
}

/**
 * Decode darmok JSON text (a string, or UTF-8 bytes), or protobuf bytes with
 * `{ format: 'protobuf' }`.
 */
export const decodeEntity: DecodeFunction<string | Uint8Array, DecodeOptions>;

/** The serializable() forms, bound to one registry. */
export interface SerializableFunction {
  <C extends Class>(Class: C, nestedTypes?: ReadonlyArray<Class>, key?: string): C;
  <C extends Class>(Class: C, nestedTypes: ReadonlyArray<Class> | undefined,
    previousVersions: ReadonlyArray<ReadonlyArray<Class>>, key?: string): C;
  <C extends Class>(Class: C, options: SerializableOptions<InstanceType<C>>): C;
  (keyOrOptions?: string | SerializableOptions): SerializableDecorator;
}

/** A set of registered classes: the default one (serializable) or one from createRegistry(). */
export interface Registry {
  /** Register classes in this registry; the same three forms as the top-level serializable(). */
  readonly serializable: SerializableFunction;
}

/** A new registry, empty and isolated from every other, with these defaults for its classes. */
export function createRegistry(options?: RegistryOptions): Registry;

/** The byte formats: darmok JSON (text) and protobuf (proto/darmok.proto, bytes). */
export type Format = 'json' | 'protobuf';

/** What a format's encodeEntity returns. */
export type Encoded<F extends Format> = F extends 'protobuf' ? Bytes : string;

/**
 * With transformKeys or rename the codec has a registry of its own with
 * these defaults (as createRegistry(options)); they cannot go with registry.
 */
export interface CodecOptions<F extends Format = Format> extends RegistryOptions {
  /** Default 'json'. */
  format?: F;
  /** Default: the registry serializable() fills. */
  registry?: Registry;
}

/** encodeEntity / decodeEntity for one format over one registry. */
export interface Codec<F extends Format = 'json'> {
  readonly format: F;
  readonly registry: Registry;
  /** Registers into this codec's registry. */
  readonly serializable: SerializableFunction;
  /** With `{ bytes: true }`, bytes in every format (JSON as its UTF-8). */
  encodeEntity(value: unknown, options: EncodeOptions & { bytes: true }): Bytes;
  encodeEntity(value: unknown, options?: EncodeOptions): Encoded<F>;
  /** As the top-level decodeEntity: with Class, a Class or null, or with `collection` that collection of them. */
  decodeEntity: typeof decodeEntity;
  toPlain(value: unknown, options?: ToPlainOptions): PlainValue;
  fromPlain: typeof fromPlain;
}

export function createCodec(options: CodecOptions<'protobuf'> & { format: 'protobuf' }): Codec<'protobuf'>;
export function createCodec(options?: CodecOptions<'json'>): Codec<'json'>;

export interface TranscodeOptions {
  from: Format;
  to: Format;
  /** Limits on the input, as decodeEntity's. */
  maxDepth?: number;
  maxBytes?: number;
  maxLength?: number;
  /** To 'json': true gives the text's UTF-8 bytes (a Buffer in Node), no string. Default false. */
  bytes?: boolean;
}

/**
 * Convert a document between darmok JSON and protobuf inside the core,
 * without building JS values: to 'protobuf' gives bytes (a Buffer in Node),
 * to 'json' a string, or its UTF-8 bytes with `bytes: true`. A round trip
 * gives back identical bytes.
 */
export function transcode(blob: string | Uint8Array, options: TranscodeOptions & { to: 'protobuf' }): Bytes;
export function transcode(blob: Uint8Array, options: TranscodeOptions & { to: 'json', bytes: true }): Bytes;
export function transcode(blob: Uint8Array, options: TranscodeOptions & { to: 'json' }): string;

/**
 * Bytes as encodeEntity and transcode return them: a Buffer where
 * Node's types are loaded (it is one in Node), else a Uint8Array (what a
 * browser gets). So the bytes go straight into ioredis or node-redis.
 */
export type Bytes = typeof globalThis extends { Buffer: { allocUnsafe(size: number): infer B } } ? B : Uint8Array;

/** What init() uses of a fetch() Response (so no DOM lib is needed). */
export interface ResponseLike {
  arrayBuffer(): Promise<ArrayBuffer>;
}

/** A URL (WHATWG), by the members init() reads. */
export interface URLLike {
  readonly href: string;
  readonly protocol: string;
}

/** A compiled WebAssembly.Module, where the project's libs declare one (DOM, or a runtime's types). */
export type WasmModule = typeof globalThis extends { WebAssembly: { Module: abstract new (...args: any[]) => infer M } } ? M : never;

/** The core's .wasm for init(): its bytes, a Response or a Promise of one, a URL, or a compiled Module. */
export type WasmSource = ArrayBuffer | ArrayBufferView | ResponseLike | PromiseLike<ResponseLike> | URLLike | WasmModule;

/**
 * Ready the WebAssembly core. In Node (and with darmok/inline) it is ready
 * at load and this resolves at once; elsewhere call it once and await it:
 * without a source it fetches the .wasm the ESM entry located (or compiles
 * the embedded one).
 */
export function init(source?: WasmSource | PromiseLike<WasmSource>): Promise<void>;

/** decodeEntity's default maxDepth, and encodeEntity's: 1000. */
export const MAX_DEPTH: number;
/** decodeEntity's default maxBytes: 64 MiB. */
export const MAX_BYTES: number;
/** decodeEntity's default maxLength: 16 Mi (16777216). */
export const MAX_LENGTH: number;
/** decodeEntity's default maxRegExpLength: 16384. */
export const MAX_REGEXP_LENGTH: number;

export type DarmokErrorCode =
  | 'ERR_SYNTAX'
  | 'ERR_FORMAT'
  | 'ERR_UNSUPPORTED_TYPE'
  | 'ERR_UNREGISTERED_CLASS'
  | 'ERR_UNKNOWN_CLASS'
  | 'ERR_DEPTH'
  | 'ERR_TOO_LARGE'
  | 'ERR_MEMORY'
  | 'ERR_INTERNAL'
  | 'ERR_INVALID_OPTION'
  | 'ERR_VERSION'
  | 'ERR_UNEXPECTED_CLASS'
  | 'ERR_REENTRANT'
  | 'ERR_NOT_READY'
  // darmok/redis (redis.d.ts)
  | 'ERR_REDIS'
  | 'ERR_CACHE_ENTRY'
  | 'ERR_LOAD_TIMEOUT';

/** Every failure of darmok. */
export class DarmokError extends Error {
  readonly code: DarmokErrorCode;
  /** Byte offset into the decoded input, for errors found while parsing. */
  readonly offset?: number;
  /** Where in the value, like `$.bars[1].baz`, when known. */
  readonly path?: string;
  /** ERR_VERSION: the class key. */
  readonly classKey?: string;
  /** ERR_VERSION: the version in the bytes. */
  readonly version?: number;
  /** ERR_VERSION: the version of the registered class. */
  readonly currentVersion?: number;
  /** ERR_UNEXPECTED_CLASS: the class key of decodeEntity's Class. */
  readonly expected?: string;
  /** ERR_UNEXPECTED_CLASS: the class key of the document's top-level instance. */
  readonly actual?: string;
}

declare const darmok: {
  serializable: typeof serializable;
  encodeEntity: typeof encodeEntity;
  decodeEntity: typeof decodeEntity;
  toPlain: typeof toPlain;
  fromPlain: typeof fromPlain;
  configure: typeof configure;
  createCodec: typeof createCodec;
  createRegistry: typeof createRegistry;
  transcode: typeof transcode;
  init: typeof init;
  DarmokError: typeof DarmokError;
  MAX_DEPTH: typeof MAX_DEPTH;
  MAX_BYTES: typeof MAX_BYTES;
  MAX_LENGTH: typeof MAX_LENGTH;
  MAX_REGEXP_LENGTH: typeof MAX_REGEXP_LENGTH;
};
export default darmok;
