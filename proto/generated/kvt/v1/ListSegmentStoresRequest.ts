// Original file: kvt/v1/controller.proto


export interface ListSegmentStoresRequest {
}

export interface ListSegmentStoresRequest__Output {
}
