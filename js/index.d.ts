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
}

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
}

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
  /** This call's format instead of the entry point's or codec's. */
  format?: Format;
}

/** Encode a value to darmok protobuf bytes (a Buffer in Node). */
export function encodeEntity(value: unknown, options: EncodeOptions & { format: 'protobuf' }): Uint8Array;
/** Encode a value to darmok JSON text. */
export function encodeEntity(value: unknown, options?: EncodeOptions & { format?: 'json' }): string;
/** A format known only at run time: JSON text or protobuf bytes. */
export function encodeEntity(value: unknown, options: EncodeOptions): string | Uint8Array;

/**
 * Decode darmok JSON text (a string, or UTF-8 bytes), or protobuf bytes with
 * `{ format: 'protobuf' }`. Class, when given, is registered first.
 */
export function decodeEntity<T = any>(blob: string | Uint8Array, Class?: Class<T> | null, options?: DecodeOptions): T;
export function decodeEntity<T = any>(blob: string | Uint8Array, options: DecodeOptions): T;

/** The serializable() forms, bound to one registry. */
export interface SerializableFunction {
  <C extends Class>(Class: C, nestedTypes?: ReadonlyArray<Class>, key?: string): C;
  <C extends Class>(Class: C, options: SerializableOptions<InstanceType<C>>): C;
  (keyOrOptions?: string | SerializableOptions): SerializableDecorator;
}

/** A set of registered classes: the default one (serializable) or one from createRegistry(). */
export interface Registry {
  /** Register classes in this registry; the same three forms as the top-level serializable(). */
  readonly serializable: SerializableFunction;
}

/** A new registry, empty and isolated from every other. */
export function createRegistry(): Registry;

/** The byte formats: darmok JSON (text) and protobuf (proto/darmok.proto, bytes). */
export type Format = 'json' | 'protobuf';

/** What a format's encodeEntity returns. */
export type Encoded<F extends Format> = F extends 'protobuf' ? Uint8Array : string;

export interface CodecOptions<F extends Format = Format> {
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
  encodeEntity(value: unknown, options?: EncodeOptions): Encoded<F>;
  decodeEntity<T = any>(blob: string | Uint8Array, Class?: Class<T> | null, options?: DecodeOptions): T;
  decodeEntity<T = any>(blob: string | Uint8Array, options: DecodeOptions): T;
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
}

/**
 * Convert a document between darmok JSON and protobuf inside the core,
 * without building JS values: to 'protobuf' gives bytes (a Buffer in Node),
 * to 'json' a string. A round trip gives back identical bytes.
 */
export function transcode(blob: string | Uint8Array, options: TranscodeOptions & { to: 'protobuf' }): Uint8Array;
export function transcode(blob: Uint8Array, options: TranscodeOptions & { to: 'json' }): string;

/**
 * Ready the WebAssembly core. In Node it is ready at load and this resolves
 * at once; elsewhere pass the .wasm bytes, a WebAssembly.Module or a Response.
 */
export function init(source?: BufferSource | WebAssembly.Module | Response | PromiseLike<Response>): Promise<void>;

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
  | 'ERR_VERSION';

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
}

declare const darmok: {
  serializable: typeof serializable;
  encodeEntity: typeof encodeEntity;
  decodeEntity: typeof decodeEntity;
  createCodec: typeof createCodec;
  createRegistry: typeof createRegistry;
  transcode: typeof transcode;
  init: typeof init;
  DarmokError: typeof DarmokError;
};
export default darmok;
