// Types for darmok/serializer: darmok JSON as a cache library's serializer.
import type { Bytes, DecodeOptions, Registry } from './index';

/**
 * serialize(value) -> darmok JSON text (or, made with `bytes: true`, its
 * UTF-8 bytes); deserialize(text) -> the value, its classes, Maps, Sets,
 * Dates, BigInts, binary data and shared references back. Fits Keyv's
 * serialize/deserialize options (and so cache-manager's Keyv stores) and
 * BentoCache's serializer option.
 */
export interface Serializer<Out extends string | Bytes = string> {
  serialize(value: unknown): Out;
  deserialize(text: string | Uint8Array): any;
}

export interface SerializerOptions {
  /** The classes to encode and decode. Default: the registry serializable() fills. */
  registry?: Registry;
  /** Options for every decode (unknownClass, newerVersion, limits). */
  decode?: DecodeOptions;
  /**
   * true: serialize gives the JSON text's UTF-8 bytes (a Buffer in Node),
   * made without a JS string, for a store that takes bytes (@keyv/redis,
   * BentoCache's redis and memory drivers; not Keyv's default Map store).
   * Default false: a string.
   */
  bytes?: boolean;
}

/** A serializer over your own registry or decode options; with `bytes: true`, one that gives bytes. */
export function createSerializer(options: SerializerOptions & { bytes: true }): Serializer<Bytes>;
export function createSerializer(options?: SerializerOptions): Serializer;

/** Over the default registry: `new Keyv({ store, ...keyvSerializer })`. */
export const keyvSerializer: Serializer;
/** Over the default registry: `new BentoCache({ serializer: bentoSerializer, ... })`. */
export const bentoSerializer: Serializer;
/** The same object as keyvSerializer and bentoSerializer. */
export const serializer: Serializer;

declare const serializers: {
  createSerializer: typeof createSerializer;
  serializer: Serializer;
  keyvSerializer: Serializer;
  bentoSerializer: Serializer;
};
export default serializers;
