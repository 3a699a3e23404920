// Original file: kvt/v1/controller.proto


export interface ListScopesRequest {
}

export interface ListScopesRequest__Output {
}
