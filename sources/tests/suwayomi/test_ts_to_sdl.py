"""The SDL rebuilt from graphql-codegen's TypeScript: names, nullability, arguments, unions, deprecations.

The snippet is in the shape graphql-codegen's `typescript` plugin writes
(Suwayomi-WebUI's `src/lib/graphql/generated/graphql-base.types.ts`).
"""

from __future__ import annotations

import pytest
from graphql import GraphQLEnumType, GraphQLInputObjectType, GraphQLUnionType, build_schema, print_type

from sources.suwayomi.schema import SCHEMA_FILES
from sources.suwayomi.ts_to_sdl import convert

pytestmark = pytest.mark.sqlite_ok

GENERATED = """export type Maybe<T> = T | null;
export type InputMaybe<T> = Maybe<T>;
export type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
export type Scalars = {
    ID: { input: string; output: string };
    String: { input: string; output: string };
    Boolean: { input: boolean; output: boolean };
    Int: { input: number; output: number };
    Float: { input: number; output: number };
    LongString: { input: string; output: string };
};

export type AboutWebUi = {
    __typename?: 'AboutWebUI';
    tag: Scalars['String']['output'];
};

export type Filter = CheckBoxFilter | TextFilter;

export type CheckBoxFilter = {
    __typename?: 'CheckBoxFilter';
    default: Scalars['Boolean']['output'];
};

export type TextFilter = {
    __typename?: 'TextFilter';
    default: Scalars['String']['output'];
};

export enum SourceOrderBy {
    Id = 'ID',
    Lang = 'LANG',
}

export type SourceConditionInput = {
    id?: InputMaybe<Scalars['LongString']['input']>;
    lang?: InputMaybe<Scalars['String']['input']>;
};

export type SourceType = {
    __typename?: 'SourceType';
    filters: Array<Filter>;
    id: Scalars['LongString']['output'];
    /** @deprecated , replace with contentWarning */
    isNsfw: Scalars['Boolean']['output'];
    iconUrl?: Maybe<Scalars['String']['output']>;
    tags: Array<Maybe<Scalars['String']['output']>>;
};

export type Query = {
    __typename?: 'Query';
    aboutWebUI: AboutWebUi;
    sources: Array<SourceType>;
};

export type QuerySourcesArgs = {
    condition?: InputMaybe<SourceConditionInput>;
    first: Scalars['Int']['input'];
};

export type PartialSourceFieldsFragment = { __typename?: 'SourceType', id: any, isNsfw: boolean };
"""


def test_the_generated_typescript_becomes_the_schema_it_was_generated_from():
    schema = build_schema(convert(GENERATED))
    assert schema.query_type is not None
    assert print_type(schema.query_type) == (
        "type Query {\n  aboutWebUI: AboutWebUI!\n"
        "  sources(condition: SourceConditionInput, first: Int!): [SourceType!]!\n}"
    )
    source = schema.get_type("SourceType")
    assert print_type(source) == (  # type: ignore[arg-type]
        "type SourceType {\n  filters: [Filter!]!\n  id: LongString!\n"
        '  isNsfw: Boolean! @deprecated(reason: "replace with contentWarning")\n'
        "  iconUrl: String\n  tags: [String]!\n}"
    )
    assert isinstance(schema.get_type("SourceConditionInput"), GraphQLInputObjectType)
    assert isinstance(schema.get_type("Filter"), GraphQLUnionType)
    order = schema.get_type("SourceOrderBy")
    assert isinstance(order, GraphQLEnumType) and sorted(order.values) == ["ID", "LANG"]
    assert schema.get_type("QuerySourcesArgs") is None  # arguments, not a type
    assert schema.get_type("PartialSourceFieldsFragment") is None  # an operation's result, not the schema's


@pytest.mark.parametrize("version", sorted(SCHEMA_FILES))
def test_each_recorded_schema_builds_and_says_where_it_came_from(version):
    from pathlib import Path

    from sources.suwayomi import schema

    text = (Path(schema.__file__).with_name(SCHEMA_FILES[version])).read_text()
    assert "github.com/Suwayomi/Suwayomi-WebUI" in text.splitlines()[2] and f"r{version[1:]}" in text[:600]
    assert schema.suwayomi_schema(version).mutation_type is not None
