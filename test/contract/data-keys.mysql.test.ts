import { inject } from 'vitest';
import { dataKeysFixture } from '../support/data-keys.js';
import { dataKeysContract } from './data-keys.contract.js';

dataKeysContract('mysql', () => dataKeysFixture('mysql', inject('serviceUrls')), inject('services').mysql);
