import { inject } from 'vitest';
import { dataKeysFixture } from '../support/data-keys.js';
import { dataKeysContract } from './data-keys.contract.js';

dataKeysContract('postgres', () => dataKeysFixture('postgres', inject('serviceUrls')), inject('services').postgres);
