// Original file: kvt/v1/segmentstore.proto


export interface ListSegmentsRequest {
}

export interface ListSegmentsRequest__Output {
}
