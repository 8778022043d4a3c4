export {
  type TinyModelDirSettings,
  type TinyModelSettings,
  tinyOnnxModel,
  tinyTokenizerJson,
  writeTinyModelDir,
} from './onnx-fixture.ts';
