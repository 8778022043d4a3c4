export { birth } from './birth.ts';
