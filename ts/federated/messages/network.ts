/**
 * A network's description on the wire, shared by the messages that carry one:
 * FedAvg's training request and FedDistr's encoder (its Network spec without
 * init or seed), and the bounds on its layers that communities' autoencoder
 * detectors use too.
 */
import { listOf, oneOf, wholeNumber } from './schema.js';

/** Most layers a network may declare on the wire, and the widest layer (the network itself checks its size against memory). */
export const MAX_LAYERS = 64;
export const MAX_LAYER_WIDTH = 2 ** 20;

export const NETWORK_FIELDS = {
  sizes: listOf(wholeNumber(1, MAX_LAYER_WIDTH), MAX_LAYERS + 1),
  activation: oneOf(['relu', 'sigmoid', 'tanh', 'identity'] as const),
  outputActivation: oneOf(['relu', 'sigmoid', 'tanh', 'identity', 'softmax'] as const),
  loss: oneOf(['mse', 'bce', 'softmax-cross-entropy'] as const),
};
