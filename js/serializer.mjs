// ESM entry for darmok/serializer: re-exports the CommonJS implementation.
import './core/locate.mjs';
import serializers from './serializer.cjs';

export const { createSerializer, serializer, keyvSerializer, bentoSerializer } = serializers;
export default serializers;
